import ContextBusObjectGraph
import ContextBusSupport

/// Turns `store.save`'s wire params into a store `SaveRequest`, reading every value with the
/// type the model gives its key.
///
/// Inserts are named by temporary IDs whose reference is the insert's `ref`; an insert without
/// a `ref` is named `insert[i]` (its index), which is also how the result's `ids` and a `422`'s
/// `data.errors` name it. A relationship value may point at an insert of the same save by its
/// `ref`, written as `{"ref":"r1"}`, `{"entity":"Reading","ref":"r1"}` or the bare string `"r1"`.
///
/// Failures are `-32602` with `data.field` the path of the offending field, such as
/// `insert[0].entity`, `update[2].values.name` or `delete[1].id`.
public struct SaveRequestDecoder: Sendable {
    public let model: Model

    public init(model: Model) {
        self.model = model
    }

    /// The decoded request and the name under which each insert appears in the result's `ids`.
    public struct Decoded: Sendable {
        public var request: SaveRequest
        /// Temporary ID of each insert → its name (`ref`, or `insert[i]`).
        public var names: [ObjectID: String]
    }

    /// Reads `params` with the model's types.
    public func decode(_ params: SaveParams) throws(RPCError) -> Decoded {
        let refs = try insertIDs(params.inserts)
        var request = SaveRequest(
            mergePolicy: params.mergePolicy, durability: params.durability, author: params.author)
        var names: [ObjectID: String] = [:]
        for (i, insert) in params.inserts.enumerated() {
            let entity = model.entity(named: insert.entity)!  // checked by insertIDs
            let id = refs.ids[i]
            names[id] = id.temporaryReference
            request.inserts.append(
                SaveRequest.Insert(
                    id: id, values: try values(insert.values, of: entity, path: "insert[\(i)].values", refs: refs)))
        }
        for (i, update) in params.updates.enumerated() {
            let entity = try existingEntity(of: update.id, path: "update[\(i)].id")
            request.updates.append(
                SaveRequest.Update(
                    id: update.id, version: update.version,
                    values: try values(update.values, of: entity, path: "update[\(i)].values", refs: refs),
                    original: try values(
                        update.original ?? [:], of: entity, path: "update[\(i)].original", refs: refs)))
        }
        for (i, delete) in params.deletes.enumerated() {
            _ = try existingEntity(of: delete.id, path: "delete[\(i)].id")
            request.deletes.append(SaveRequest.Delete(id: delete.id, version: delete.version))
        }
        return Decoded(request: request, names: names)
    }

    // MARK: - Inserts and refs

    /// The temporary IDs of the inserts, in order, and a lookup by `ref`.
    private struct InsertReferences {
        var ids: [ObjectID] = []
        var byRef: [String: ObjectID] = [:]
    }

    private func insertIDs(_ inserts: [SaveParams.Insert]) throws(RPCError) -> InsertReferences {
        var references = InsertReferences()
        let given = Set(inserts.compactMap(\.ref))
        for (i, insert) in inserts.enumerated() {
            guard model.entity(named: insert.entity) != nil else {
                throw .invalidParams(field: "insert[\(i)].entity", message: "unknown entity '\(insert.entity)'")
            }
            let name: String
            if let ref = insert.ref {
                guard !ref.isEmpty else {
                    throw .invalidParams(field: "insert[\(i)].ref", message: "must not be empty")
                }
                guard references.byRef[ref] == nil else {
                    throw .invalidParams(field: "insert[\(i)].ref", message: "ref '\(ref)' names two inserts")
                }
                name = ref
            } else {
                var candidate = "insert[\(i)]"
                while given.contains(candidate) { candidate = "_" + candidate }
                name = candidate
            }
            let id = ObjectID(entity: insert.entity, temporaryReference: name)
            references.ids.append(id)
            if insert.ref != nil { references.byRef[name] = id }
        }
        return references
    }

    private func existingEntity(of id: ObjectID, path: String) throws(RPCError) -> EntityDescription {
        guard !id.isTemporary else {
            throw .invalidParams(field: path, message: "expected the permanent ID of a saved object")
        }
        guard let entity = model.entity(named: id.entity) else {
            throw .invalidParams(field: path, message: "unknown entity '\(id.entity)'")
        }
        return entity
    }

    // MARK: - Values

    private func values(
        _ json: [String: JSONValue], of entity: EntityDescription, path: String, refs: InsertReferences
    ) throws(RPCError) -> [String: PropertyValue] {
        var result: [String: PropertyValue] = [:]
        result.reserveCapacity(json.count)
        for (key, value) in json {
            let field = "\(path).\(key)"
            if let attribute = entity.attribute(named: key) {
                guard let converted = PropertyValue(json: value, type: attribute.type) else {
                    throw .invalidParams(field: field, message: "expected \(Self.describe(attribute.type)) or null")
                }
                result[key] = converted
            } else if let relationship = entity.relationship(named: key) {
                result[key] = try relationshipValue(value, relationship, field: field, refs: refs)
            } else {
                throw .invalidParams(field: field, message: "\(entity.name) has no attribute or relationship '\(key)'")
            }
        }
        return result
    }

    private func relationshipValue(
        _ json: JSONValue, _ relationship: RelationshipDescription, field: String, refs: InsertReferences
    ) throws(RPCError) -> PropertyValue {
        if relationship.isToMany {
            guard case .array(let items) = json else {
                throw .invalidParams(field: field, message: "expected an array of object IDs or refs")
            }
            var ids: [ObjectID] = []
            ids.reserveCapacity(items.count)
            for (i, item) in items.enumerated() {
                ids.append(try reference(item, relationship, field: "\(field)[\(i)]", refs: refs))
            }
            return .references(ids)
        }
        if json.isNull { return .null }
        return .reference(try reference(json, relationship, field: field, refs: refs))
    }

    private func reference(
        _ json: JSONValue, _ relationship: RelationshipDescription, field: String, refs: InsertReferences
    ) throws(RPCError) -> ObjectID {
        let id: ObjectID
        switch json {
        case .string(let text):
            if let insert = refs.byRef[text] {
                id = insert
            } else if let permanent = ObjectID(string: text) {
                id = permanent
            } else {
                throw .invalidParams(
                    field: field, message: "'\(text)' is neither an object ID like \"Entity/12\" nor a ref of this save"
                )
            }
        case .object(let members):
            guard let ref = members["ref"]?.stringValue, let insert = refs.byRef[ref] else {
                throw .invalidParams(field: field, message: "expected {\"ref\": …} naming an insert of this save")
            }
            if let entity = members["entity"]?.stringValue, entity != insert.entity {
                throw .invalidParams(
                    field: field, message: "ref '\(ref)' is an insert of \(insert.entity), not \(entity)")
            }
            id = insert
        default:
            throw .invalidParams(field: field, message: "expected an object ID like \"Entity/12\" or a ref")
        }
        guard id.entity == relationship.destination else {
            throw .invalidParams(
                field: field, message: "\(relationship.name) points at \(relationship.destination), not \(id.entity)")
        }
        return id
    }

    /// How the wire spells a value of `type`, for error messages.
    public static func describe(_ type: AttributeType) -> String {
        switch type {
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
