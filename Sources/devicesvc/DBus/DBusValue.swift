/// One key/value pair of a D-Bus dictionary (`a{kv}`), kept in wire order.
package struct DBusDictionaryEntry: Sendable, Hashable {
    package var key: DBusValue
    package var value: DBusValue

    package init(_ key: DBusValue, _ value: DBusValue) {
        self.key = key
        self.value = value
    }
}

/// A typed D-Bus value: one case per type of the specification.
///
/// Containers carry their element types, so an empty array or dictionary still has a complete signature. The
/// encoder checks every element against that type, so a mixed array fails with `DBusWireError.typeMismatch`
/// instead of producing a malformed message.
///
/// ```swift
/// let properties: DBusValue = .propertyMap(["Powered": .boolean(true), "Alias": .string("kitchen")])
/// properties.type.signature  // "a{sv}"
/// ```
///
/// Only `variant` is `indirect`: the other cases hold their children in arrays already, so a byte array's elements
/// (a characteristic's value: one element per byte) are stored inline rather than boxed one heap allocation each.
package enum DBusValue: Sendable, Hashable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(DBusObjectPath)
    case signature(DBusSignature)
    /// An index into the message's out-of-band file descriptors (`h`).
    case unixFD(UInt32)
    /// A value that carries its own signature (`v`).
    indirect case variant(DBusValue)
    /// An array of `element`-typed values (`a<element>`).
    case array(DBusType, [DBusValue])
    /// An array of dict entries (`a{kv}`), in wire order.
    case dictionary(key: DBusType, value: DBusType, [DBusDictionaryEntry])
    /// A struct (`(…)`) of one or more fields.
    case structure([DBusValue])

    /// The D-Bus type of this value.
    package var type: DBusType {
        switch self {
        case .byte: return .byte
        case .boolean: return .boolean
        case .int16: return .int16
        case .uint16: return .uint16
        case .int32: return .int32
        case .uint32: return .uint32
        case .int64: return .int64
        case .uint64: return .uint64
        case .double: return .double
        case .string: return .string
        case .objectPath: return .objectPath
        case .signature: return .signature
        case .unixFD: return .unixFD
        case .variant: return .variant
        case .array(let element, _): return .array(element)
        case .dictionary(let key, let value, _): return .dictionary(key: key, value: value)
        case .structure(let fields): return .structure(fields.map(\.type))
        }
    }

    // MARK: - Building common shapes

    /// A byte array (`ay`), as BlueZ uses for GATT values.
    package static func bytes(_ bytes: [UInt8]) -> DBusValue {
        .array(.byte, bytes.map(DBusValue.byte))
    }

    /// A string array (`as`).
    package static func strings(_ strings: [String]) -> DBusValue {
        .array(.string, strings.map(DBusValue.string))
    }

    /// A property map (`a{sv}`), each value wrapped in a variant, keys in sorted order so that encoding is
    /// deterministic.
    package static func propertyMap(_ properties: [String: DBusValue]) -> DBusValue {
        let entries = properties.sorted { $0.key < $1.key }.map {
            DBusDictionaryEntry(.string($0.key), .variant($0.value))
        }
        return .dictionary(key: .string, value: .variant, entries)
    }

    /// An object path value.
    ///
    /// - Throws: `DBusWireError.invalidObjectPath` when `text` is not a valid path.
    package static func objectPath(_ text: String) throws(DBusWireError) -> DBusValue {
        .objectPath(try DBusObjectPath(text))
    }
}

extension DBusValue: CustomStringConvertible {
    /// A compact, readable rendering for logs and test failures, e.g. `{"Powered": <true>}`.
    package var description: String {
        switch self {
        case .byte(let value): return "0x" + String(value, radix: 16)
        case .boolean(let value): return String(value)
        case .int16(let value): return String(value)
        case .uint16(let value): return String(value)
        case .int32(let value): return String(value)
        case .uint32(let value): return String(value)
        case .int64(let value): return String(value)
        case .uint64(let value): return String(value)
        case .double(let value): return String(value)
        case .string(let value): return "\"" + value + "\""
        case .objectPath(let path): return "objpath " + path.rawValue
        case .signature(let signature): return "signature " + signature.rawValue
        case .unixFD(let index): return "fd #" + String(index)
        case .variant(let inner): return "<" + inner.description + ">"
        case .array(_, let elements): return "[" + elements.map(\.description).joined(separator: ", ") + "]"
        case .dictionary(_, _, let entries):
            return "{" + entries.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
        case .structure(let fields): return "(" + fields.map(\.description).joined(separator: ", ") + ")"
        }
    }
}

extension DBusValue {
    /// Two values are equal when they are the same on the wire: doubles compare by bit pattern, so
    /// a NaN read from a message equals itself (IEEE `==` would make a decoded message unequal to
    /// the same message decoded again; found by the `dbus` fuzz target) and `-0.0` differs from
    /// `0.0`. Equal values have equal bits, so the synthesized `hash(into:)` stays consistent.
    package static func == (lhs: DBusValue, rhs: DBusValue) -> Bool {
        switch lhs {
        case .byte(let a): if case .byte(let b) = rhs { return a == b }
        case .boolean(let a): if case .boolean(let b) = rhs { return a == b }
        case .int16(let a): if case .int16(let b) = rhs { return a == b }
        case .uint16(let a): if case .uint16(let b) = rhs { return a == b }
        case .int32(let a): if case .int32(let b) = rhs { return a == b }
        case .uint32(let a): if case .uint32(let b) = rhs { return a == b }
        case .int64(let a): if case .int64(let b) = rhs { return a == b }
        case .uint64(let a): if case .uint64(let b) = rhs { return a == b }
        case .double(let a): if case .double(let b) = rhs { return a.bitPattern == b.bitPattern }
        case .string(let a): if case .string(let b) = rhs { return a == b }
        case .objectPath(let a): if case .objectPath(let b) = rhs { return a == b }
        case .signature(let a): if case .signature(let b) = rhs { return a == b }
        case .unixFD(let a): if case .unixFD(let b) = rhs { return a == b }
        case .variant(let a): if case .variant(let b) = rhs { return a == b }
        case .array(let type, let a):
            if case .array(let otherType, let b) = rhs { return type == otherType && a == b }
        case .dictionary(let key, let value, let a):
            if case .dictionary(let otherKey, let otherValue, let b) = rhs {
                return key == otherKey && value == otherValue && a == b
            }
        case .structure(let a): if case .structure(let b) = rhs { return a == b }
        }
        return false
    }
}
