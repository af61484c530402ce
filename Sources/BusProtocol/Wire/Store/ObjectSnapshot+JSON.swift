import ContextBusObjectGraph
import ContextBusSupport

/// An object in answers: `{"id":"Reading/12","version":3,"values":{…}}` (docs/protocol.md, `store.fetch`).
extension ObjectSnapshot: ModelJSONConvertible {
    public init(json: JSONValue, model: Model) throws(RPCError) {
        try self.init(fields: JSONFields(json), model: model)
    }

    /// Reads an object whose members `fields` holds; errors name `fields`' path.
    init(fields: JSONFields, model: Model) throws(RPCError) {
        let id = try fields.objectID("id")
        self.init(
            id: id, version: try fields.int64("version"),
            values: try model.typedValues(
                fields.optionalObject("values") ?? [:], of: id.entity,
                path: fields.path.isEmpty ? "object" : fields.path))
    }

    public var json: JSONValue {
        .object([
            "id": .string(id.description), "version": .int(version), "values": .object(values.mapValues(\.jsonValue)),
        ])
    }
}
