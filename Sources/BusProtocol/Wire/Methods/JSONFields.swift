import ContextBusObjectGraph
import ContextBusSupport

/// Reads the members of a JSON object, throwing `invalidParams` errors that name the field by path.
///
/// Every reader of params and results goes through this type, so that a wrong field is always
/// reported the same way: `data.field` is the path from the params' root, such as
/// `steps[2].characteristic` or `update[0].version`. Absent members and `null` are the same for
/// the `optional…` readers; the others require the member.
public struct JSONFields: Sendable {
    /// The object's members.
    public let members: [String: JSONValue]
    // The path is kept in pieces and only spelled out for an error (or a nested reader), so
    // that reading a long array of elements builds no strings.
    private let parentPath: String
    private let key: String?
    private let index: Int?

    /// Reads `json` as an object at `path`.
    ///
    /// - Throws: `invalidParams` when `json` is not an object.
    public init(_ json: JSONValue, path: String = "") throws(RPCError) {
        try self.init(json, parentPath: path, key: nil, index: nil)
    }

    private init(_ json: JSONValue, parentPath: String, key: String?, index: Int?) throws(RPCError) {
        self.parentPath = parentPath
        self.key = key
        self.index = index
        guard case .object(let members) = json else {
            self.members = [:]
            let path = self.path
            throw .invalidParams(field: path.isEmpty ? nil : path, message: "expected an object")
        }
        self.members = members
    }

    /// The path of this object from the root (`""` at the root), such as `steps[2]`.
    public var path: String {
        guard let key else { return parentPath }
        let base = parentPath.isEmpty ? key : "\(parentPath).\(key)"
        guard let index else { return base }
        return "\(base)[\(index)]"
    }

    /// The path of element `index` of the array member `key`.
    public func path(of key: String, index: Int) -> String {
        "\(path(of: key))[\(index)]"
    }

    /// A reader for `item`, element `index` of the array member `key`.
    public func element(_ item: JSONValue, of key: String, at index: Int) throws(RPCError) -> JSONFields {
        try JSONFields(item, parentPath: path, key: key, index: index)
    }

    /// The path of the member `key`.
    public func path(of key: String) -> String {
        path.isEmpty ? key : "\(path).\(key)"
    }

    /// An `invalidParams` error for the member `key`.
    public func error(_ key: String, _ message: String) -> RPCError {
        .invalidParams(field: path(of: key), message: message)
    }

    /// The member `key`, or `nil` when it is absent or `null`.
    public func value(_ key: String) -> JSONValue? {
        guard let value = members[key], !value.isNull else { return nil }
        return value
    }

    /// The member `key`, which must be present and not `null`.
    public func required(_ key: String) throws(RPCError) -> JSONValue {
        guard let value = value(key) else { throw error(key, "is required") }
        return value
    }

    // MARK: - Scalars

    public func string(_ key: String) throws(RPCError) -> String {
        guard let s = try optionalString(key) else { throw error(key, "is required") }
        return s
    }

    public func optionalString(_ key: String) throws(RPCError) -> String? {
        guard let value = value(key) else { return nil }
        guard case .string(let s) = value else { throw error(key, "expected a string") }
        return s
    }

    public func int64(_ key: String) throws(RPCError) -> Int64 {
        guard let i = try optionalInt64(key) else { throw error(key, "is required") }
        return i
    }

    public func optionalInt64(_ key: String) throws(RPCError) -> Int64? {
        guard let value = value(key) else { return nil }
        guard let i = value.intValue else { throw error(key, "expected an integer") }
        return i
    }

    public func int(_ key: String) throws(RPCError) -> Int {
        guard let i = try optionalInt(key) else { throw error(key, "is required") }
        return i
    }

    public func optionalInt(_ key: String) throws(RPCError) -> Int? {
        guard let i = try optionalInt64(key) else { return nil }
        guard let small = Int(exactly: i) else { throw error(key, "is out of range") }
        return small
    }

    /// An integer that must be at least `minimum` (for counts, limits, durations).
    public func optionalInt(_ key: String, atLeast minimum: Int) throws(RPCError) -> Int? {
        guard let i = try optionalInt(key) else { return nil }
        guard i >= minimum else { throw error(key, "must be at least \(minimum)") }
        return i
    }

    public func double(_ key: String) throws(RPCError) -> Double {
        guard let d = try optionalDouble(key) else { throw error(key, "is required") }
        return d
    }

    public func optionalDouble(_ key: String) throws(RPCError) -> Double? {
        guard let value = value(key) else { return nil }
        guard let d = value.doubleValue else { throw error(key, "expected a number") }
        return d
    }

    public func bool(_ key: String) throws(RPCError) -> Bool {
        guard let b = try optionalBool(key) else { throw error(key, "is required") }
        return b
    }

    public func optionalBool(_ key: String) throws(RPCError) -> Bool? {
        guard let value = value(key) else { return nil }
        guard case .bool(let b) = value else { throw error(key, "expected true or false") }
        return b
    }

    /// A string that must be the raw value of one of `cases`.
    public func optionalEnum<T: RawRepresentable>(_ key: String, cases: [T]) throws(RPCError) -> T?
    where T.RawValue == String {
        guard let s = try optionalString(key) else { return nil }
        guard let value = cases.first(where: { $0.rawValue == s }) else {
            throw error(key, "must be one of \(cases.map { "'\($0.rawValue)'" }.joined(separator: ", "))")
        }
        return value
    }

    // MARK: - Structures

    /// An object member as raw members (for `values`, `args`, …, kept as JSON at this layer).
    public func object(_ key: String) throws(RPCError) -> [String: JSONValue] {
        guard let o = try optionalObject(key) else { throw error(key, "is required") }
        return o
    }

    public func optionalObject(_ key: String) throws(RPCError) -> [String: JSONValue]? {
        guard let value = value(key) else { return nil }
        guard case .object(let o) = value else { throw error(key, "expected an object") }
        return o
    }

    /// An object member as a reader whose errors name paths below `key`.
    public func nested(_ key: String) throws(RPCError) -> JSONFields {
        try JSONFields(required(key), parentPath: path, key: key, index: nil)
    }

    public func array(_ key: String) throws(RPCError) -> [JSONValue] {
        guard let a = try optionalArray(key) else { throw error(key, "is required") }
        return a
    }

    public func optionalArray(_ key: String) throws(RPCError) -> [JSONValue]? {
        guard let value = value(key) else { return nil }
        guard case .array(let a) = value else { throw error(key, "expected an array") }
        return a
    }

    /// Reads each element of the array `key` (absent: empty) with `read`, which gets the element
    /// and its index (`path(of:index:)` spells its path for an error).
    public func elements<T>(_ key: String, _ read: (JSONValue, Int) throws(RPCError) -> T) throws(RPCError) -> [T] {
        let items = try optionalArray(key) ?? []
        var result: [T] = []
        result.reserveCapacity(items.count)
        for (i, item) in items.enumerated() {
            result.append(try read(item, i))
        }
        return result
    }

    /// The array `key` of objects (absent: empty), each read by `read` from its own reader.
    public func objects<T>(_ key: String, _ read: (JSONFields) throws(RPCError) -> T) throws(RPCError) -> [T] {
        try elements(key) { (item, i) throws(RPCError) in try read(element(item, of: key, at: i)) }
    }

    /// The array `key` of strings (absent: empty).
    public func strings(_ key: String) throws(RPCError) -> [String] {
        try elements(key) { (item, i) throws(RPCError) in
            guard case .string(let s) = item else {
                throw .invalidParams(field: path(of: key, index: i), message: "expected a string")
            }
            return s
        }
    }

    // MARK: - Object IDs

    /// A permanent object ID, `"Entity/N"`.
    public func objectID(_ key: String) throws(RPCError) -> ObjectID {
        try JSONFields.objectID(required(key), path: path(of: key))
    }

    public func optionalObjectID(_ key: String) throws(RPCError) -> ObjectID? {
        guard let value = value(key) else { return nil }
        return try JSONFields.objectID(value, path: path(of: key))
    }

    /// The array `key` of permanent object IDs (absent: empty).
    public func objectIDs(_ key: String) throws(RPCError) -> [ObjectID] {
        try elements(key) { (item, i) throws(RPCError) in
            guard case .string(let s) = item, let id = ObjectID(string: s) else {
                throw .invalidParams(
                    field: path(of: key, index: i), message: "expected an object ID like \"Entity/12\"")
            }
            return id
        }
    }

    /// Reads `json` as a permanent object ID at `path`.
    public static func objectID(_ json: JSONValue, path: String) throws(RPCError) -> ObjectID {
        guard case .string(let s) = json, let id = ObjectID(string: s) else {
            throw .invalidParams(field: path, message: "expected an object ID like \"Entity/12\"")
        }
        return id
    }
}
