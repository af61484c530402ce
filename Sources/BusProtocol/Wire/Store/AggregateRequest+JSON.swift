import ContextBusObjectGraph
import ContextBusSupport
import Foundation

/// `store.aggregate`'s params (docs/protocol.md, "store.aggregate"):
/// `{"entity","where"?,"args"?,"groupBy"?:["device"],"bucket"?:{"key":"time","seconds":3600},"values":{"n":"count","mean":"avg:number"}}`.
/// What the keys name is checked against the model by the store (`-32602` naming `groupBy[i]`, `bucket.key`,
/// `values.<name>`).
extension AggregateRequest: JSONConvertible {
    public init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        var bucket: Bucket?
        if fields.value("bucket") != nil {
            let members = try fields.nested("bucket")
            let seconds = try members.int64("seconds")
            guard seconds > 0 else { throw members.error("seconds", "must be at least 1") }
            bucket = Bucket(key: try members.string("key"), seconds: seconds)
        }
        var values: [String: Function] = [:]
        for (name, spelling) in try fields.object("values") {
            guard let text = spelling.stringValue, let function = Function(text) else {
                throw .invalidParams(
                    field: "values.\(name)",
                    message: "expected count, count:key, sum:key, avg:key, min:key or max:key")
            }
            values[name] = function
        }
        self.init(
            entity: try fields.string("entity"),
            where: try PredicateInput.predicate(try fields.optionalString("where")),
            arguments: PredicateInput.arguments(try fields.optionalObject("args") ?? [:]),
            groupBy: try fields.strings("groupBy"), bucket: bucket, values: values)
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "entity": .string(entity), "values": .object(values.mapValues { .string($0.description) }),
        ]
        if let predicate { members["where"] = .string(predicate.predicateFormat) }
        if !arguments.isEmpty { members["args"] = .object(arguments.mapValues(\.jsonValue)) }
        if !groupBy.isEmpty { members["groupBy"] = .array(groupBy.map(JSONValue.string)) }
        if let bucket { members["bucket"] = .object(["key": .string(bucket.key), "seconds": .int(bucket.seconds)]) }
        return .object(members)
    }
}

/// `store.aggregate`'s result: `{"txn","groups":[{"key":{…},"values":{…}}]}`, to-one keys as IDs, dates in RFC 3339.
///
/// Read without the request, values keep their JSON kind (numbers, strings); `typed(for:model:)` gives them the
/// types the request's keys have (dates, references, doubles).
extension AggregateResult: JSONConvertible {
    public init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        func plain(_ object: [String: JSONValue]) -> [String: PropertyValue] {
            object.mapValues { value in
                switch value {
                case .null: return .null
                case .bool(let b): return .bool(b)
                case .int(let i): return .int(i)
                case .double(let d): return .double(d)
                case .string(let s): return .string(s)
                default: return .json(value)
                }
            }
        }
        self.init(
            txn: try fields.int64("txn"),
            groups: try fields.objects("groups") { (group) throws(RPCError) in
                Group(key: plain(try group.optionalObject("key") ?? [:]), values: plain(try group.object("values")))
            })
    }

    public var json: JSONValue {
        .object([
            "txn": .int(txn),
            "groups": .array(
                groups.map { group in
                    .object([
                        "key": .object(group.key.mapValues(\.jsonValue)),
                        "values": .object(group.values.mapValues(\.jsonValue)),
                    ])
                }),
        ])
    }

    /// The result with every value of the type `request`'s keys have in `model`: dates, references to the
    /// destinations of to-one keys, doubles for double attributes and averages.
    ///
    /// - Throws: `-32602` naming the group and key of a value that does not fit.
    public func typed(for request: AggregateRequest, model: Model) throws(RPCError) -> AggregateResult {
        guard let entity = model.entity(named: request.entity) else {
            throw .invalidParams(field: "entity", message: "unknown entity '\(request.entity)'")
        }
        func typed(_ value: PropertyValue, key: String?, average: Bool, field: String) throws(RPCError) -> PropertyValue
        {
            if value.isNull { return .null }
            if average, let number = Self.number(value) { return .double(number) }
            guard let key else { return value }
            if let relationship = entity.relationship(named: key) {
                guard case .string(let text) = value, let id = ObjectID(string: text),
                    id.entity == relationship.destination
                else { throw .invalidParams(field: field, message: "expected an ID of \(relationship.destination)") }
                return .reference(id)
            }
            guard let attribute = entity.attribute(named: key),
                let typed = PropertyValue(json: value.jsonValue, type: attribute.type)
            else { throw .invalidParams(field: field, message: "does not fit '\(key)'") }
            return typed
        }
        var result = self
        for (i, group) in groups.enumerated() {
            for (name, value) in group.key {
                result.groups[i].key[name] = try typed(
                    value, key: name, average: false, field: "groups[\(i)].key.\(name)")
            }
            for (name, value) in group.values {
                let function = request.values[name]
                let key: String?
                switch function {
                case .sum(let k)?, .minimum(let k)?, .maximum(let k)?: key = k
                default: key = nil
                }
                var isAverage = false
                if case .average? = function { isAverage = true }
                result.groups[i].values[name] = try typed(
                    value, key: key, average: isAverage, field: "groups[\(i)].values.\(name)")
            }
        }
        return result
    }

    private static func number(_ value: PropertyValue) -> Double? {
        switch value {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }
}
