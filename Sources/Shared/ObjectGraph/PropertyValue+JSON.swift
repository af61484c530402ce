import ContextBusSupport
import Foundation

extension PropertyValue {
    /// The wire form of this value (`docs/protocol.md`, "Values are JSON").
    ///
    /// Dates become RFC 3339 strings, binary data base64, UUIDs lowercase strings, references
    /// `Entity/N` strings (temporary ones `{"entity","ref"}`).
    public var jsonValue: JSONValue {
        switch self {
        case .null: return .null
        case .string(let s): return .string(s)
        case .int(let i): return .int(i)
        case .double(let d): return .double(d)
        case .bool(let b): return .bool(b)
        case .date(let d): return .string(d.rfc3339String)
        case .binary(let data): return .string(data.base64EncodedString())
        case .uuid(let u): return .string(u.uuidString.lowercased())
        case .json(let j): return j
        case .reference(let id): return id.jsonValue
        case .references(let ids): return .array(ids.map(\.jsonValue))
        }
    }

    /// Whether the value has a JSON form: it is not NaN or an infinity, and holds neither (a date's
    /// seconds, a number inside a json value). JSON has none for them (docs/wire-format.md).
    package var hasJSONForm: Bool {
        switch self {
        case .double(let d): return d.isFinite
        case .date(let d): return d.timeIntervalSinceReferenceDate.isFinite
        case .json(let j): return !j.holdsNonFiniteNumber
        default: return true
        }
    }

    /// Reads a wire value as an attribute of `type`; `nil` when it does not have that type.
    ///
    /// `null` reads as `.null` for every type (optionality is checked by validation).
    public init?(json: JSONValue, type: AttributeType) {
        if case .null = json {
            self = .null
            return
        }
        switch (type, json) {
        case (.string, .string(let s)): self = .string(s)
        case (.int, _):
            guard let i = json.intValue, !(json.doubleValue.map { $0.isNaN } ?? false) else { return nil }
            if case .double = json { return nil }
            self = .int(i)
        case (.double, .int(let i)): self = .double(Double(i))
        case (.double, .double(let d)): self = .double(d)
        case (.bool, .bool(let b)): self = .bool(b)
        case (.date, .string(let s)):
            guard let d = Date(rfc3339: s) else { return nil }
            self = .date(d)
        case (.binary, .string(let s)):
            guard let data = Data(base64Encoded: s) else { return nil }
            self = .binary(data)
        case (.uuid, .string(let s)):
            guard let u = UUID(uuidString: s) else { return nil }
            self = .uuid(u)
        case (.json, _): self = .json(json)
        default: return nil
        }
    }

    /// Reads a wire value as a relationship's value: an ID (to-one) or an array of IDs (to-many).
    public init?(json: JSONValue, toMany: Bool) {
        if toMany {
            guard case .array(let items) = json else { return nil }
            var ids: [ObjectID] = []
            ids.reserveCapacity(items.count)
            for item in items {
                guard let id = ObjectID(json: item) else { return nil }
                ids.append(id)
            }
            self = .references(ids)
        } else if json.isNull {
            self = .null
        } else {
            guard let id = ObjectID(json: json) else { return nil }
            self = .reference(id)
        }
    }
}

extension ObjectID {
    /// The wire form: `"Entity/N"`, or `{"entity","ref"}` for a temporary ID.
    public var jsonValue: JSONValue {
        switch kind {
        case .permanent: return .string(description)
        case .temporary(let ref): return .object(["entity": .string(entity), "ref": .string(ref)])
        }
    }

    /// Reads the wire form written by `jsonValue`.
    public init?(json: JSONValue) {
        switch json {
        case .string(let s): self.init(string: s)
        case .object(let members):
            guard let entity = members["entity"]?.stringValue, let ref = members["ref"]?.stringValue else {
                return nil
            }
            self.init(entity: entity, temporaryReference: ref)
        default: return nil
        }
    }
}
