/// The type of one complete D-Bus value, as written in a signature.
///
/// Each case is one "single complete type" of the D-Bus specification. Containers carry their element types, so
/// an empty array still knows what it holds (the wire needs that to align its first element).
///
/// | code | case | alignment |
/// | --- | --- | --- |
/// | `y` | `byte` | 1 |
/// | `b` | `boolean` | 4 |
/// | `n` `q` | `int16` `uint16` | 2 |
/// | `i` `u` `h` | `int32` `uint32` `unixFD` | 4 |
/// | `x` `t` `d` | `int64` `uint64` `double` | 8 |
/// | `s` `o` | `string` `objectPath` | 4 |
/// | `g` | `signature` | 1 |
/// | `a…` | `array` / `dictionary` (`a{kv}`) | 4 |
/// | `(…)` | `structure` | 8 |
/// | `v` | `variant` | 1 |
package indirect enum DBusType: Sendable, Hashable {
    case byte
    case boolean
    case int16
    case uint16
    case int32
    case uint32
    case int64
    case uint64
    case double
    case string
    case objectPath
    case signature
    case unixFD
    case variant
    /// `a<element>`: an array of any single complete type except a bare dict entry.
    case array(DBusType)
    /// `a{<key><value>}`: an array of dict entries; the key is a basic type.
    case dictionary(key: DBusType, value: DBusType)
    /// `(<fields>)`: a struct with at least one field.
    case structure([DBusType])

    /// Whether the type is basic (fixed-size or string-like), the only kind allowed as a dict entry key.
    package var isBasic: Bool {
        switch self {
        case .variant, .array, .dictionary, .structure: return false
        default: return true
        }
    }

    /// The boundary, in bytes from the start of the message, at which a value of this type starts.
    package var alignment: Int {
        switch self {
        case .byte, .signature, .variant: return 1
        case .int16, .uint16: return 2
        case .boolean, .int32, .uint32, .unixFD, .string, .objectPath, .array, .dictionary: return 4
        case .int64, .uint64, .double, .structure: return 8
        }
    }

    /// The signature text of this one type, such as `a{sv}`.
    package var signature: String {
        var text = ""
        appendSignature(to: &text)
        return text
    }

    /// Appends the signature text of this type to `text`.
    package func appendSignature(to text: inout String) {
        switch self {
        case .byte: text.append("y")
        case .boolean: text.append("b")
        case .int16: text.append("n")
        case .uint16: text.append("q")
        case .int32: text.append("i")
        case .uint32: text.append("u")
        case .int64: text.append("x")
        case .uint64: text.append("t")
        case .double: text.append("d")
        case .string: text.append("s")
        case .objectPath: text.append("o")
        case .signature: text.append("g")
        case .unixFD: text.append("h")
        case .variant: text.append("v")
        case .array(let element):
            text.append("a")
            element.appendSignature(to: &text)
        case .dictionary(let key, let value):
            text.append("a{")
            key.appendSignature(to: &text)
            value.appendSignature(to: &text)
            text.append("}")
        case .structure(let fields):
            text.append("(")
            for field in fields { field.appendSignature(to: &text) }
            text.append(")")
        }
    }
}

extension DBusType: CustomStringConvertible {
    package var description: String { signature }
}
