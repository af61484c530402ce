/// Why `JSONParser` rejected its input, and the byte offset where it noticed.
///
/// `offset` counts bytes from the start of the input (0-based) and points at the first byte
/// that cannot be part of a valid document; for `unexpectedEndOfInput` it equals the input's length.
public struct JSONParseError: Error, Sendable, Hashable {
    /// What was wrong.
    public enum Reason: Sendable, Hashable {
        /// The input ended inside a value (or was empty).
        case unexpectedEndOfInput
        /// A byte that cannot start or continue a value here.
        case unexpectedByte(UInt8)
        /// A string holds bytes that are not well-formed UTF-8 (RFC 3629: no overlongs, no surrogates).
        case invalidUTF8
        /// A string holds an unescaped control character (U+0000 to U+001F).
        case controlCharacterInString(UInt8)
        /// A backslash followed by something other than `" \ / b f n r t u`.
        case invalidEscape(UInt8)
        /// `\u` not followed by four hexadecimal digits.
        case invalidUnicodeEscape
        /// A `\uD800`–`\uDFFF` escape that is not half of a high-then-low surrogate pair.
        case loneSurrogate(UInt16)
        /// A number that does not follow RFC 8259's grammar (leading zeros, a bare `-`, `1.`, `1e`).
        case invalidNumber
        /// A number too large in magnitude for a `Double`.
        case numberOutOfRange
        /// Arrays and objects nested deeper than the parser's `maximumDepth`.
        case tooDeep(limit: Int)
        /// An object that names the same member twice.
        case duplicateKey(String)
        /// Bytes other than whitespace after the document.
        case trailingData
    }

    /// What was wrong.
    public var reason: Reason
    /// The 0-based byte offset of the problem.
    public var offset: Int

    public init(_ reason: Reason, at offset: Int) {
        self.reason = reason
        self.offset = offset
    }
}

extension JSONParseError: CustomStringConvertible {
    /// One line: what was wrong and where, for example `invalid JSON at byte 12: unexpected byte 0x7d ('}')`.
    public var description: String {
        "invalid JSON at byte \(offset): \(reasonDescription)"
    }

    private var reasonDescription: String {
        switch reason {
        case .unexpectedEndOfInput: return "unexpected end of input"
        case .unexpectedByte(let b): return "unexpected byte \(hex(b))\(printable(b))"
        case .invalidUTF8: return "invalid UTF-8 in a string"
        case .controlCharacterInString(let b): return "unescaped control character \(hex(b)) in a string"
        case .invalidEscape(let b): return "invalid escape '\\' followed by \(hex(b))\(printable(b))"
        case .invalidUnicodeEscape: return "\\u must be followed by four hexadecimal digits"
        case .loneSurrogate(let unit):
            return "unpaired surrogate \\u\(String(unit, radix: 16, uppercase: true)) (needs a high-low pair)"
        case .invalidNumber: return "malformed number"
        case .numberOutOfRange: return "number out of the range of a 64-bit double"
        case .tooDeep(let limit): return "arrays and objects nested deeper than \(limit) levels"
        case .duplicateKey(let key): return "duplicate object member \"\(key)\""
        case .trailingData: return "unexpected data after the JSON document"
        }
    }

    private func hex(_ byte: UInt8) -> String {
        let digits = String(byte, radix: 16)
        return "0x" + (digits.count == 1 ? "0" + digits : digits)
    }

    private func printable(_ byte: UInt8) -> String {
        (0x21...0x7E).contains(byte) ? " ('\(Character(Unicode.Scalar(byte)))')" : ""
    }
}
