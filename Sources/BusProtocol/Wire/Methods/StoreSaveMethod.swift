import ContextBusObjectGraph
import ContextBusSupport

// `store.save` and the data of its `409` and `422` errors (`PROTOCOL.md`, "Store methods",
// "Merge policies").

/// `store.save`: inserts, updates and deletes committed as one transaction.
public enum StoreSave: RPCMethod {
    public typealias Params = SaveParams
    public typealias Result = SaveResult
    public static let name = "store.save"
}

/// `{"insert":[…],"update":[…],"delete":[…],"mergePolicy":"error","durability":"disk","author":"…"}`;
/// every member is optional (an empty save is valid).
public struct SaveParams: JSONConvertible, Hashable {
    /// `{"entity":"Reading","ref":"r1","values":{…}}`.
    public struct Insert: Sendable, Hashable {
        public var entity: String
        /// Names the new object so that relationships in the same save (as `{"entity","ref"}`)
        /// and the result's `ids` can refer to it.
        public var ref: String?
        public var values: [String: JSONValue]

        public init(entity: String, ref: String?, values: [String: JSONValue]) {
            self.entity = entity
            self.ref = ref
            self.values = values
        }
    }

    /// `{"id":"Reading/3","version":2,"values":{changed keys},"original":{their values at that version}}`.
    public struct Update: Sendable, Hashable {
        public var id: ObjectID
        /// `nil` skips the conflict check.
        public var version: Int64?
        public var values: [String: JSONValue]
        public var original: [String: JSONValue]?

        public init(id: ObjectID, version: Int64?, values: [String: JSONValue], original: [String: JSONValue]? = nil) {
            self.id = id
            self.version = version
            self.values = values
            self.original = original
        }
    }

    /// `{"id":"Reading/4","version":1}`.
    public struct Delete: Sendable, Hashable {
        public var id: ObjectID
        /// `nil` skips the conflict check.
        public var version: Int64?

        public init(id: ObjectID, version: Int64?) {
            self.id = id
            self.version = version
        }
    }

    public var inserts: [Insert]
    public var updates: [Update]
    public var deletes: [Delete]
    public var mergePolicy: MergePolicy
    public var durability: Durability
    public var author: String?

    public init(
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

    public init(json: JSONValue) throws(RPCError) {
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

    public var json: JSONValue {
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

/// `{"txn":1235,"ids":{"r1":"Reading/13"},"versions":{"Reading/13":1,"Reading/3":3}}`.
public struct SaveResult: JSONConvertible, Hashable {
    public var txn: Int64
    /// Each insert's `ref` → its permanent ID.
    public var ids: [String: ObjectID]
    /// The new version of every object the save inserted or updated (inverse sides included).
    public var versions: [ObjectID: Int64]

    public init(txn: Int64, ids: [String: ObjectID], versions: [ObjectID: Int64]) {
        self.txn = txn
        self.ids = ids
        self.versions = versions
    }

    public init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        txn = try fields.int64("txn")
        var ids: [String: ObjectID] = [:]
        for (ref, id) in try fields.optionalObject("ids") ?? [:] {
            ids[ref] = try JSONFields.objectID(id, path: "ids.\(ref)")
        }
        self.ids = ids
        var versions: [ObjectID: Int64] = [:]
        for (key, version) in try fields.optionalObject("versions") ?? [:] {
            guard let id = ObjectID(string: key) else {
                throw .invalidParams(field: "versions.\(key)", message: "expected an object ID like \"Entity/12\"")
            }
            guard let number = version.intValue else {
                throw .invalidParams(field: "versions.\(key)", message: "expected an integer")
            }
            versions[id] = number
        }
        self.versions = versions
    }

    public var json: JSONValue {
        var versionMembers: [String: JSONValue] = [:]
        for (id, version) in versions { versionMembers[id.description] = .int(version) }
        return .object([
            "txn": .int(txn), "ids": .object(ids.mapValues { .string($0.description) }),
            "versions": .object(versionMembers),
        ])
    }
}

/// One entry of a `409`'s `data.conflicts`: `{"id","version","currentVersion","currentValues"}`.
///
/// `currentVersion` and `currentValues` are `null` when the object no longer exists.
public struct SaveConflict: JSONConvertible, Hashable {
    public var id: ObjectID
    /// The version the save expected.
    public var version: Int64?
    public var currentVersion: Int64?
    public var currentValues: [String: JSONValue]?

    public init(id: ObjectID, version: Int64?, currentVersion: Int64?, currentValues: [String: JSONValue]?) {
        self.id = id
        self.version = version
        self.currentVersion = currentVersion
        self.currentValues = currentValues
    }

    public init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        id = try fields.objectID("id")
        version = try fields.optionalInt64("version")
        currentVersion = try fields.optionalInt64("currentVersion")
        currentValues = try fields.optionalObject("currentValues")
    }

    public var json: JSONValue {
        .object([
            "id": .string(id.description), "version": version.map(JSONValue.int) ?? .null,
            "currentVersion": currentVersion.map(JSONValue.int) ?? .null,
            "currentValues": currentValues.map(JSONValue.object) ?? .null,
        ])
    }
}

/// One entry of a `422`'s `data.errors`: `{"id"?, "ref"?, "key", "reason"}`.
public struct ValidationIssue: JSONConvertible, Hashable {
    /// The object at fault, when it has a permanent ID.
    public var id: ObjectID?
    /// The insert at fault, by its `ref`.
    public var ref: String?
    public var key: String
    public var reason: String

    public init(id: ObjectID? = nil, ref: String? = nil, key: String, reason: String) {
        self.id = id
        self.ref = ref
        self.key = key
        self.reason = reason
    }

    public init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        id = try fields.optionalObjectID("id")
        ref = try fields.optionalString("ref")
        key = try fields.string("key")
        reason = try fields.string("reason")
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = ["key": .string(key), "reason": .string(reason)]
        if let id { members["id"] = .string(id.description) }
        if let ref { members["ref"] = .string(ref) }
        return .object(members)
    }
}

extension RPCError {
    /// 409: the save's versions do not match and the merge policy is `error`.
    public static func conflict(_ conflicts: [SaveConflict]) -> RPCError {
        let ids = conflicts.map(\.id.description).joined(separator: ", ")
        return .conflict("save conflicts with the current version of \(ids)", conflicts: conflicts.map(\.json))
    }

    /// 422: the save breaks the model's rules.
    public static func validationFailed(_ issues: [ValidationIssue]) -> RPCError {
        let first = issues.first.map { ": \($0.key) \($0.reason)" } ?? ""
        return .validationFailed(
            "validation failed for \(issues.count) value\(issues.count == 1 ? "" : "s")\(first)",
            errors: issues.map(\.json))
    }
}
