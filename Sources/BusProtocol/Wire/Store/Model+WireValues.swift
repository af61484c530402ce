import ContextBusObjectGraph
import ContextBusSupport

extension Model {
    /// Reads wire values of an object of `entityName`: attributes with their types, relationships as IDs
    /// (to-many sorted by ID, as snapshots hold them).
    ///
    /// - Throws: `-32602` with `data.field` `path.values.<key>`.
    public func typedValues(
        _ json: [String: JSONValue], of entityName: String, path: String
    ) throws(RPCError) -> [String: PropertyValue] {
        guard entity(named: entityName) != nil else {
            throw .invalidParams(field: "\(path).id", message: "unknown entity '\(entityName)'")
        }
        return try typedValues(json, of: entityName, fieldPrefix: "\(path).values")
    }

    /// `typedValues(_:of:path:)` with errors naming `fieldPrefix.<key>` (such as `set.name` for `store.batch`).
    public func typedValues(
        _ json: [String: JSONValue], of entityName: String, fieldPrefix: String
    ) throws(RPCError) -> [String: PropertyValue] {
        guard let entity = entity(named: entityName) else {
            throw .invalidParams(field: fieldPrefix, message: "unknown entity '\(entityName)'")
        }
        var values: [String: PropertyValue] = [:]
        values.reserveCapacity(json.count)
        for (key, value) in json {
            let field = "\(fieldPrefix).\(key)"
            if let attribute = entity.attribute(named: key) {
                guard let typed = PropertyValue(json: value, type: attribute.type) else {
                    throw .invalidParams(field: field, message: "expected \(attribute.type.wireDescription) or null")
                }
                values[key] = typed
            } else if let relationship = entity.relationship(named: key) {
                guard let typed = PropertyValue(json: value, toMany: relationship.isToMany) else {
                    throw .invalidParams(field: field, message: "expected object IDs like \"Entity/12\"")
                }
                if case .references(let ids) = typed {
                    values[key] = .references(ids.sorted())
                } else {
                    values[key] = typed
                }
            } else {
                throw .invalidParams(field: field, message: "\(entityName) has no attribute or relationship '\(key)'")
            }
        }
        return values
    }
}

extension AttributeType {
    /// How the wire spells a value of this type, for error messages.
    public var wireDescription: String {
        switch self {
        case .string: return "a string"
        case .int: return "a 64-bit integer"
        case .double: return "a number"
        case .bool: return "true or false"
        case .date: return "an RFC 3339 date-time string"
        case .binary: return "a base64 string"
        case .uuid: return "a UUID string"
        case .json: return "any JSON"
        }
    }
}
