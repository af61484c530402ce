import ContextBusObjectGraph
import ContextBusSupport
import ContextBusWire

/// A save as `ctxbus store save` reads it from its words or JSON, before the service reads it with its model:
/// values stay JSON (`key=value` words are typed by `storesvc`, which knows each key's type). It has the
/// `store.save` shape (`{"insert":[…],"update":[…],"delete":[…],"mergePolicy","durability","author"}`, docs/protocol.md),
/// checked here so that a malformed save is a usage error before anything is sent.
struct SaveForm: Sendable, Hashable {
    /// `{"entity":"Reading","ref":"r1","values":{…}}`.
    struct Insert: Sendable, Hashable {
        var entity: String
        /// Names the new object so that relationships in the same save (as `{"entity","ref"}`)
        /// and the result's `ids` can refer to it.
        var ref: String?
        var values: [String: JSONValue]

        init(entity: String, ref: String?, values: [String: JSONValue]) {
            self.entity = entity
            self.ref = ref
            self.values = values
        }
    }

    /// `{"id":"Reading/3","version":2,"values":{changed keys},"original":{their values at that version}}`.
    struct Update: Sendable, Hashable {
        var id: ObjectID
        /// `nil` skips the conflict check.
        var version: Int64?
        var values: [String: JSONValue]
        var original: [String: JSONValue]?

        init(id: ObjectID, version: Int64?, values: [String: JSONValue], original: [String: JSONValue]? = nil) {
            self.id = id
            self.version = version
            self.values = values
            self.original = original
        }
    }

    /// `{"id":"Reading/4","version":1}`.
    struct Delete: Sendable, Hashable {
        var id: ObjectID
        /// `nil` skips the conflict check.
        var version: Int64?

        init(id: ObjectID, version: Int64?) {
            self.id = id
            self.version = version
        }
    }

    var inserts: [Insert]
    var updates: [Update]
    var deletes: [Delete]
    var mergePolicy: MergePolicy
    var durability: Durability
    var author: String?

    init(
        inserts: [Insert] = [], updates: [Update] = [], deletes: [Delete] = [], mergePolicy: MergePolicy = .error,
        durability: Durability = .disk, author: String? = nil
    ) {
        self.inserts = inserts
        self.updates = updates
        self.deletes = deletes
        self.mergePolicy = mergePolicy
        self.durability = durability
        self.author = author
    }

    init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        inserts = try fields.objects("insert") { (insert) throws(RPCError) in
            Insert(
                entity: try insert.string("entity"), ref: try insert.optionalString("ref"),
                values: try insert.optionalObject("values") ?? [:])
        }
        updates = try fields.objects("update") { (update) throws(RPCError) in
            Update(
                id: try update.objectID("id"), version: try update.optionalInt64("version"),
                values: try update.object("values"), original: try update.optionalObject("original"))
        }
        deletes = try fields.objects("delete") { (delete) throws(RPCError) in
            Delete(id: try delete.objectID("id"), version: try delete.optionalInt64("version"))
        }
        mergePolicy = try fields.optionalEnum("mergePolicy", cases: MergePolicy.allCases) ?? .error
        durability = try fields.optionalEnum("durability", cases: [Durability.disk, .memory]) ?? .disk
        author = try fields.optionalString("author")
    }

    var json: JSONValue {
        var members: [String: JSONValue] = [
            "mergePolicy": .string(mergePolicy.rawValue), "durability": .string(durability.rawValue),
        ]
        if !inserts.isEmpty {
            members["insert"] = .array(
                inserts.map { insert in
                    var object: [String: JSONValue] = [
                        "entity": .string(insert.entity), "values": .object(insert.values),
                    ]
                    if let ref = insert.ref { object["ref"] = .string(ref) }
                    return .object(object)
                })
        }
        if !updates.isEmpty {
            members["update"] = .array(
                updates.map { update in
                    var object: [String: JSONValue] = [
                        "id": .string(update.id.description), "values": .object(update.values),
                    ]
                    if let version = update.version { object["version"] = .int(version) }
                    if let original = update.original { object["original"] = .object(original) }
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
        return .object(members)
    }
}
