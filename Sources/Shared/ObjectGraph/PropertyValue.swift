import ContextBusSupport
public import Foundation

/// The value of one property of a managed object: an attribute's value or a relationship's target(s).
///
/// `null` is a missing optional value (or an empty to-one relationship). Relationship values are
/// object IDs: `reference` for a to-one, `references` for a to-many (order not significant).
public enum PropertyValue: Sendable, Hashable {
    case null
    case string(String)
    case int(Int64)
    case double(Double)
    case bool(Bool)
    /// A point in time; on the wire an RFC 3339 string with fractional seconds, in UTC.
    case date(Date)
    case binary(Data)
    case uuid(UUID)
    case json(JSONValue)
    case reference(ObjectID)
    case references([ObjectID])
}

extension PropertyValue {
    /// Whether this is `null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The attribute type this value belongs to, or `nil` for `null` and relationship values.
    public var attributeType: AttributeType? {
        switch self {
        case .string: return .string
        case .int: return .int
        case .double: return .double
        case .bool: return .bool
        case .date: return .date
        case .binary: return .binary
        case .uuid: return .uuid
        case .json: return .json
        case .null, .reference, .references: return nil
        }
    }

    /// The integer of an `int` value, else `nil`.
    public var intValue: Int64? {
        if case .int(let value) = self { return value }
        return nil
    }

    /// The IDs of a to-many relationship's value (`references`), else `nil`.
    public var referencesValue: [ObjectID]? {
        if case .references(let ids) = self { return ids }
        return nil
    }

    /// The string of a `string` value, else `nil`.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }
}

extension PropertyValue: CustomStringConvertible {
    public var description: String {
        switch self {
        case .null: return "nil"
        case .string(let s): return "\"\(s)\""
        case .int(let i): return String(i)
        case .double(let d): return String(d)
        case .bool(let b): return String(b)
        case .date(let d): return d.rfc3339String
        case .binary(let data): return "<\(data.count) bytes>"
        case .uuid(let u): return u.uuidString.lowercased()
        case .json(let j): return "json(\(j))"
        case .reference(let id): return id.description
        case .references(let ids): return "[" + ids.map(\.description).joined(separator: ", ") + "]"
        }
    }
}
