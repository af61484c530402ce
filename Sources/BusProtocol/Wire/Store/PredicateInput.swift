import ContextBusObjectGraph
import ContextBusSupport

/// Reads a request's `where` and `args` (`store.fetch`, `store.subscribe`).
package enum PredicateInput {
    /// Parses `format`; `nil` when there is none.
    ///
    /// - Throws: `-32602` with `data.field` `"where"` and `data.position`, the 0-based offset
    ///   (in Unicode scalars) of the error in the format string; `-32602` too for a predicate with more
    ///   comparisons through relationships than `maximumRelationshipComparisons`.
    package static func predicate(_ format: String?) throws(RPCError) -> ContextBusObjectGraph.ObjectPredicate? {
        guard let format else { return nil }
        let predicate: ContextBusObjectGraph.ObjectPredicate
        do {
            predicate = try ContextBusObjectGraph.ObjectPredicate(format: format)
        } catch {
            throw RPCError(
                code: .invalidParams, message: "invalid params: where: \(error)",
                data: .object(["field": .string("where"), "position": .int(Int64(error.position))]))
        }
        try checkCost(of: predicate)
        return predicate
    }

    /// The `args` as predicate arguments: each JSON value as `.json`, which binding reads as the
    /// plain scalar (or, for an array, as the items of an `IN $list`).
    package static func arguments(_ json: [String: JSONValue]) -> [String: PropertyValue] {
        json.mapValues { PropertyValue.json($0) }
    }
}
