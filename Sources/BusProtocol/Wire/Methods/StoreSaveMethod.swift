import ContextBusObjectGraph
import ContextBusSupport

// `store.save` and the data of its `409` and `422` errors (`docs/protocol.md`, "Store methods",
// "Merge policies").

/// `store.save`: inserts, updates and deletes committed as one transaction.
public enum StoreSave: RPCMethod {
    public typealias Params = SaveRequest
    public typealias Result = SaveResult
    public static let name = "store.save"
}

/// One entry of a `409`'s `data.conflicts` (docs/protocol.md, "Merge policies", "Unique constraints and upsert"):
///
/// - a version that does not match: `{"id","version","currentVersion","currentValues"}`, the current ones `null` when
///   the object no longer exists;
/// - an insert whose unique key a live object has: `{"ref","id","key","currentVersion","currentValues"}`, `id` the
///   live object;
/// - a save that would give two objects one unique key: `{"id","key","conflictsWith"}` (`"ref"` instead of `"id"`
///   for an insert; `conflictsWith` an ID, or the `ref` of an insert of the same save).
public struct SaveConflict: JSONConvertible, Hashable {
    public var id: ObjectID?
    /// The version the save expected.
    public var version: Int64?
    public var currentVersion: Int64?
    public var currentValues: [String: JSONValue]?
    /// The insert at fault, by its `ref` (unique-key conflicts).
    public var ref: String?
    /// The unique key's values (unique-key conflicts).
    public var key: [String: JSONValue]?
    /// The object that has the key already: an ID, or an insert's `ref`.
    public var conflictsWith: String?

    public init(
        id: ObjectID?, version: Int64?, currentVersion: Int64?, currentValues: [String: JSONValue]?, ref: String? = nil,
        key: [String: JSONValue]? = nil, conflictsWith: String? = nil
    ) {
        self.id = id
        self.version = version
        self.currentVersion = currentVersion
        self.currentValues = currentValues
        self.ref = ref
        self.key = key
        self.conflictsWith = conflictsWith
    }

    public init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        id = try fields.optionalObjectID("id")
        version = try fields.optionalInt64("version")
        currentVersion = try fields.optionalInt64("currentVersion")
        currentValues = try fields.optionalObject("currentValues")
        ref = try fields.optionalString("ref")
        key = try fields.optionalObject("key")
        conflictsWith = try fields.optionalString("conflictsWith")
        guard id != nil || ref != nil else { throw fields.error("id", "a conflict names an object by 'id' or 'ref'") }
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = [:]
        if let id { members["id"] = .string(id.description) }
        if let ref { members["ref"] = .string(ref) }
        if let key { members["key"] = .object(key) }
        if let conflictsWith {
            members["conflictsWith"] = .string(conflictsWith)
            return .object(members)
        }
        if key == nil { members["version"] = version.map(JSONValue.int) ?? .null }
        members["currentVersion"] = currentVersion.map(JSONValue.int) ?? .null
        members["currentValues"] = currentValues.map(JSONValue.object) ?? .null
        return .object(members)
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
        if conflicts.contains(where: { $0.key != nil }) {
            let names = conflicts.map { $0.ref ?? $0.id?.description ?? "?" }.joined(separator: ", ")
            return .conflict("unique key already taken: \(names)", conflicts: conflicts.map(\.json))
        }
        let ids = conflicts.map { $0.id?.description ?? "?" }.joined(separator: ", ")
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

/// `store.batch`: every object of an entity matching a predicate changed or deleted in one transaction.
public enum StoreBatch: RPCMethod {
    public typealias Params = BatchRequest
    public typealias Result = BatchResult
    public static let name = "store.batch"
}
