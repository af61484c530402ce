import ContextBusObjectGraph
import ContextBusSupport

/// `store.save`'s params (docs/protocol.md, "store.save"):
///
/// ```
/// {"insert":[{"entity":"Reading","ref":"r1","values":{…}}],
///  "update":[{"id":"Reading/3","version":2,"values":{changed keys},"original":{their values at that version}}],
///  "delete":[{"id":"Reading/4","version":1}],
///  "mergePolicy":"error","durability":"disk","author":"…","changes":false}
/// ```
///
/// Every member is optional (an empty save is valid). Values are read with the type the model gives their key.
/// Inserts are named by temporary IDs whose reference is the insert's `ref`; an insert without a `ref` is named
/// `insert[i]` (its index), which is also how the result's `ids` and a `422`'s `data.errors` name it. A
/// relationship value may point at an insert of the same save by its `ref`, written as `{"ref":"r1"}`,
/// `{"entity":"Reading","ref":"r1"}` or the bare string `"r1"`. Failures are `-32602` with `data.field` the path
/// of the offending field, such as `insert[0].entity`, `update[2].values.name` or `delete[1].id`.
extension SaveRequest: ModelJSONConvertible {
    public init(json: JSONValue, model: Model) throws(RPCError) {
        let fields = try JSONFields(json)
        let reader = SaveRequestReader(model: model)
        let inserts = try fields.objects("insert") { (insert) throws(RPCError) in
            (entity: try insert.string("entity"), ref: try insert.optionalString("ref"), fields: insert)
        }
        let refs = try reader.insertIDs(inserts.map { ($0.entity, $0.ref) })
        self.init(
            mergePolicy: try fields.optionalEnum("mergePolicy", cases: MergePolicy.allCases) ?? .error,
            durability: try fields.optionalEnum("durability", cases: Durability.allCases) ?? .disk,
            author: try fields.optionalString("author"),
            includesChangesInAnswer: try fields.optionalBool("changes") ?? false)
        for (i, insert) in inserts.enumerated() {
            let entity = model.entity(named: insert.entity)!  // checked by insertIDs
            self.inserts.append(
                Insert(
                    id: refs.ids[i],
                    values: try reader.values(
                        insert.fields.optionalObject("values") ?? [:], of: entity, path: "insert[\(i)].values",
                        refs: refs)))
        }
        updates = try fields.objects("update") { (update) throws(RPCError) in
            let id = try update.objectID("id")
            let entity = try reader.existingEntity(of: id, path: "\(update.path).id")
            return Update(
                id: id, version: try update.optionalInt64("version"),
                values: try reader.values(
                    update.object("values"), of: entity, path: "\(update.path).values", refs: refs),
                original: try reader.values(
                    update.optionalObject("original") ?? [:], of: entity, path: "\(update.path).original",
                    refs: refs))
        }
        if fields.value("origin") != nil {
            origin = try SaveOrigin(fields: fields.nested("origin"), insertsByRef: refs.byRef)
        }
        deletes = try fields.objects("delete") { (delete) throws(RPCError) in
            let id = try delete.objectID("id")
            _ = try reader.existingEntity(of: id, path: "\(delete.path).id")
            return Delete(id: id, version: try delete.optionalInt64("version"))
        }
    }

    /// The wire form: inserts named by their temporary IDs' references (as `ref`), relationship values pointing
    /// at inserts as `{"entity","ref"}`. An insert with a permanent ID (reserved from another store) is written
    /// with its ID as `ref`, which `storesvc` refuses: it assigns the IDs of inserts itself.
    public var json: JSONValue {
        func value(_ value: PropertyValue) -> JSONValue {
            switch value {
            case .reference(let id) where id.isTemporary: return reference(id)
            case .references(let ids) where ids.contains(where: \.isTemporary):
                return .array(ids.map { $0.isTemporary ? reference($0) : .string($0.description) })
            default: return value.jsonValue
            }
        }
        func reference(_ id: ObjectID) -> JSONValue {
            .object(["entity": .string(id.entity), "ref": .string(id.temporaryReference ?? id.description)])
        }
        var members: [String: JSONValue] = [
            "mergePolicy": .string(mergePolicy.rawValue), "durability": .string(durability.rawValue),
        ]
        if !inserts.isEmpty {
            members["insert"] = .array(
                inserts.map { insert in
                    .object([
                        "entity": .string(insert.id.entity),
                        "ref": .string(insert.id.temporaryReference ?? insert.id.description),
                        "values": .object(insert.values.mapValues(value)),
                    ])
                })
        }
        if !updates.isEmpty {
            members["update"] = .array(
                updates.map { update in
                    var object: [String: JSONValue] = [
                        "id": .string(update.id.description), "values": .object(update.values.mapValues(value)),
                    ]
                    if let version = update.version { object["version"] = .int(version) }
                    if !update.original.isEmpty { object["original"] = .object(update.original.mapValues(value)) }
                    return .object(object)
                })
        }
        if !deletes.isEmpty {
            members["delete"] = .array(
                deletes.map { delete in
                    var object: [String: JSONValue] = ["id": .string(delete.id.description)]
                    if let version = delete.version { object["version"] = .int(version) }
                    return .object(object)
                })
        }
        if let author { members["author"] = .string(author) }
        if includesChangesInAnswer { members["changes"] = .bool(true) }
        if let origin { members["origin"] = origin.json }
        return .object(members)
    }

    /// The objects the save inserts, updates and deletes.
    public var objectCount: Int { inserts.count + updates.count + deletes.count }
}

/// Reads the parts of `store.save`'s params that need the model: entities, values, refs.
private struct SaveRequestReader {
    let model: Model

    /// The temporary IDs of the inserts, in order, and a lookup by `ref`.
    struct InsertReferences {
        var ids: [ObjectID] = []
        var byRef: [String: ObjectID] = [:]
    }

    func insertIDs(_ inserts: [(entity: String, ref: String?)]) throws(RPCError) -> InsertReferences {
        var references = InsertReferences()
        // The refs given, to keep the names made for inserts without one clear of them (made only when needed).
        var given: Set<String>?
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
                if given == nil { given = Set(inserts.compactMap(\.ref)) }
                var candidate = "insert[\(i)]"
                while given!.contains(candidate) { candidate = "_" + candidate }
                name = candidate
            }
            let id = ObjectID(entity: insert.entity, temporaryReference: name)
            references.ids.append(id)
            if insert.ref != nil { references.byRef[name] = id }
        }
        return references
    }

    func existingEntity(of id: ObjectID, path: @autoclosure () -> String) throws(RPCError) -> EntityDescription {
        guard !id.isTemporary else {
            throw .invalidParams(field: path(), message: "expected the permanent ID of a saved object")
        }
        guard let entity = model.entity(named: id.entity) else {
            throw .invalidParams(field: path(), message: "unknown entity '\(id.entity)'")
        }
        return entity
    }

    // Field paths are spelled out only for a failure (`@autoclosure`): a valid save would otherwise build a string per
    // value it reads.
    func values(
        _ json: [String: JSONValue], of entity: EntityDescription, path: @autoclosure () -> String,
        refs: InsertReferences
    ) throws(RPCError) -> [String: PropertyValue] {
        var result: [String: PropertyValue] = [:]
        result.reserveCapacity(json.count)
        for (key, value) in json {
            if let attribute = entity.attribute(named: key) {
                guard let converted = PropertyValue(json: value, type: attribute.type) else {
                    throw .invalidParams(
                        field: "\(path()).\(key)", message: "expected \(attribute.type.wireDescription) or null")
                }
                result[key] = converted
            } else if let relationship = entity.relationship(named: key) {
                result[key] = try relationshipValue(value, relationship, field: "\(path()).\(key)", refs: refs)
            } else {
                throw .invalidParams(
                    field: "\(path()).\(key)", message: "\(entity.name) has no attribute or relationship '\(key)'")
            }
        }
        return result
    }

    private func relationshipValue(
        _ json: JSONValue, _ relationship: RelationshipDescription, field: @autoclosure () -> String,
        refs: InsertReferences
    ) throws(RPCError) -> PropertyValue {
        if relationship.isToMany {
            guard case .array(let items) = json else {
                throw .invalidParams(field: field(), message: "expected an array of object IDs or refs")
            }
            var ids: [ObjectID] = []
            ids.reserveCapacity(items.count)
            for (i, item) in items.enumerated() {
                ids.append(try reference(item, relationship, field: "\(field())[\(i)]", refs: refs))
            }
            return .references(ids)
        }
        if json.isNull { return .null }
        return .reference(try reference(json, relationship, field: field(), refs: refs))
    }

    private func reference(
        _ json: JSONValue, _ relationship: RelationshipDescription, field: @autoclosure () -> String,
        refs: InsertReferences
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
                    field: field(),
                    message: "'\(text)' is neither an object ID like \"Entity/12\" nor a ref of this save")
            }
        case .object(let members):
            guard let ref = members["ref"]?.stringValue, let insert = refs.byRef[ref] else {
                throw .invalidParams(field: field(), message: "expected {\"ref\": …} naming an insert of this save")
            }
            if let entity = members["entity"]?.stringValue, entity != insert.entity {
                throw .invalidParams(
                    field: field(), message: "ref '\(ref)' is an insert of \(insert.entity), not \(entity)")
            }
            id = insert
        default:
            throw .invalidParams(field: field(), message: "expected an object ID like \"Entity/12\" or a ref")
        }
        guard id.entity == relationship.destination else {
            throw .invalidParams(
                field: field(), message: "\(relationship.name) points at \(relationship.destination), not \(id.entity)")
        }
        return id
    }
}
