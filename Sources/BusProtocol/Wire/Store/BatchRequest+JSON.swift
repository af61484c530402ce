import ContextBusObjectGraph
import ContextBusSupport

/// `store.batch`'s params (docs/protocol.md, "store.batch"):
/// `{"entity","where"?,"args"?,"set"?:{"key":value},"delete"?:true,"author"?,"durability"?}`, with exactly one of
/// `set` and `delete`. `set` values are read with the model's types (a to-one relationship as an ID); `args` as in
/// `store.fetch`.
extension BatchRequest: ModelJSONConvertible {
    public init(json: JSONValue, model: Model) throws(RPCError) {
        let fields = try JSONFields(json)
        let entityName = try fields.string("entity")
        guard model.entity(named: entityName) != nil else {
            throw fields.error("entity", "unknown entity '\(entityName)'")
        }
        let set = try fields.optionalObject("set")
        let delete = try fields.optionalBool("delete") ?? false
        let action: Action
        switch (set, delete) {
        case (let values?, false):
            action = .set(try model.typedValues(values, of: entityName, fieldPrefix: "set"))
        case (nil, true):
            action = .delete
        default:
            throw fields.error("set", "give exactly one of 'set' and 'delete': true")
        }
        self.init(
            entity: entityName, where: try PredicateInput.predicate(try fields.optionalString("where")),
            arguments: PredicateInput.arguments(try fields.optionalObject("args") ?? [:]), action: action,
            durability: try fields.optionalEnum("durability", cases: Durability.allCases) ?? .disk,
            author: try fields.optionalString("author"))
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = ["entity": .string(entity), "durability": .string(durability.rawValue)]
        if let predicate { members["where"] = .string(predicate.predicateFormat) }
        if !arguments.isEmpty { members["args"] = .object(arguments.mapValues(\.jsonValue)) }
        switch action {
        case .set(let values): members["set"] = .object(values.mapValues(\.jsonValue))
        case .delete: members["delete"] = .bool(true)
        }
        if let author { members["author"] = .string(author) }
        return .object(members)
    }
}

/// `store.batch`'s result: `{"txn":1241,"count":12}`, `txn` `null` when nothing matched and nothing was written.
extension BatchResult: JSONConvertible {
    public init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        self.init(
            txn: try fields.optionalInt64("txn"), count: try fields.optionalInt("count", atLeast: 0) ?? 0, changes: nil)
    }

    public var json: JSONValue {
        .object(["txn": txn.map(JSONValue.int) ?? .null, "count": .int(Int64(count))])
    }
}
