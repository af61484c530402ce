import ContextBusObjectGraph
import ContextBusSupport

// `store.fetch`'s params and the store's `FetchRequest`: the request plus how to send to-many relationships
// (`toMany`), with the predicate as its format string and the arguments as wire values.

extension FetchParams {
    /// `store.fetch`'s params for a store fetch request (the predicate as its format string, the arguments as
    /// their wire values), asking for to-many relationships as `toMany` says.
    public init(_ request: FetchRequest, toMany: ReadToMany = .values) {
        self.init(
            entity: request.entity, predicate: request.predicate?.predicateFormat,
            arguments: request.arguments.mapValues(\.jsonValue), sort: request.sortDescriptors,
            limit: request.fetchLimit, offset: request.fetchOffset, resultType: request.resultType, toMany: toMany)
    }

    /// The store fetch request these params describe.
    ///
    /// - Throws: `-32602` with `data.field` `where` and `data.position` when the predicate does not parse.
    public func fetchRequest() throws(RPCError) -> FetchRequest {
        FetchRequest(
            entity: entity, predicate: try PredicateInput.predicate(predicate),
            arguments: PredicateInput.arguments(arguments), sortDescriptors: sort, fetchLimit: limit,
            fetchOffset: offset, resultType: resultType)
    }
}
