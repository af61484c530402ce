/// Why bytes could not be read as, or values could not be written as, a D-Bus message.
///
/// Every malformed or hostile input ends in one of these cases; the marshalling code never traps on input.
package enum DBusWireError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A signature string breaks the grammar or the limits of the specification.
    case invalidSignature(String, reason: String)
    /// An object path is not `/` or `/segment/segment` of `[A-Za-z0-9_]`.
    case invalidObjectPath(String)
    /// A bus, interface, member or error name breaks the naming rules.
    case invalidName(String, kind: String)
    /// A string is not UTF-8, contains NUL, or lacks its terminating NUL.
    case invalidString(offset: Int, reason: String)
    /// A boolean is encoded as something other than 0 or 1.
    case invalidBoolean(UInt32, offset: Int)
    /// The data ends before the value being read.
    case truncated(offset: Int, needed: Int)
    /// An alignment padding byte is not zero.
    case nonZeroPadding(offset: Int)
    /// An array is longer than the 64 MiB the specification allows.
    case arrayTooLong(length: Int, limit: Int)
    /// An array's elements do not end exactly at the length its header gives.
    case arrayLengthMismatch(offset: Int)
    /// A message is larger than the 128 MiB the specification allows.
    case messageTooLarge(length: Int, limit: Int)
    /// Containers nest deeper than the specification allows.
    case nestingTooDeep(limit: Int)
    /// A value does not have the type its signature (or its array's element type) demands.
    case typeMismatch(expected: String, actual: String)
    /// The first byte of a message is neither `l` (little-endian) nor `B` (big-endian).
    case invalidByteOrder(UInt8)
    /// The major protocol version is not 1.
    case unsupportedProtocolVersion(UInt8)
    /// A header field is missing, duplicated, of the wrong type, or the serial is zero.
    case invalidHeader(String)
    /// The message type byte is none of the four the specification defines; such a message "must be ignored".
    case unknownMessageType(UInt8)
    /// The body does not fill exactly the length the header gives.
    case bodyLengthMismatch(declared: Int, used: Int)

    package var description: String {
        switch self {
        case .invalidSignature(let text, let reason): return "invalid D-Bus signature \"\(text)\": \(reason)"
        case .invalidObjectPath(let path): return "invalid D-Bus object path \"\(path)\""
        case .invalidName(let name, let kind): return "invalid D-Bus \(kind) name \"\(name)\""
        case .invalidString(let offset, let reason): return "invalid D-Bus string at offset \(offset): \(reason)"
        case .invalidBoolean(let raw, let offset): return "invalid D-Bus boolean \(raw) at offset \(offset)"
        case .truncated(let offset, let needed):
            return "D-Bus data truncated: \(needed) bytes needed at offset \(offset)"
        case .nonZeroPadding(let offset): return "non-zero D-Bus padding byte at offset \(offset)"
        case .arrayTooLong(let length, let limit): return "D-Bus array of \(length) bytes exceeds \(limit)"
        case .arrayLengthMismatch(let offset): return "D-Bus array elements overrun their length at offset \(offset)"
        case .messageTooLarge(let length, let limit): return "D-Bus message of \(length) bytes exceeds \(limit)"
        case .nestingTooDeep(let limit): return "D-Bus containers nest deeper than \(limit)"
        case .typeMismatch(let expected, let actual): return "D-Bus value of type \(actual) where \(expected) is needed"
        case .invalidByteOrder(let byte): return "invalid D-Bus byte order mark \(byte)"
        case .unsupportedProtocolVersion(let version): return "unsupported D-Bus protocol version \(version)"
        case .invalidHeader(let reason): return "invalid D-Bus message header: \(reason)"
        case .unknownMessageType(let type): return "unknown D-Bus message type \(type)"
        case .bodyLengthMismatch(let declared, let used):
            return "D-Bus body length \(declared) does not match the \(used) bytes its signature reads"
        }
    }
}

/// The limits the D-Bus specification sets on messages.
enum DBusLimits {
    /// "The maximum length of a message, including header, header alignment padding, and body is 2 to the 27th
    /// power or 134217728 (128 MiB)."
    static let maximumMessageLength = 134_217_728
    /// "Arrays have a maximum length defined to be 2 to the 26th power or 67108864 (64 MiB)."
    static let maximumArrayLength = 67_108_864
    /// "The maximum length of a signature is 255."
    static let maximumSignatureLength = 255
    /// "The maximum depth of array type nesting is 32", and the same for structs.
    static let maximumContainerDepth = 32
    /// "The maximum depth of container type nesting in message data is 64", variants included.
    static let maximumTotalDepth = 64
}
