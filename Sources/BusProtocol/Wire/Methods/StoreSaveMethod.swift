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
