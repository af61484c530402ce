extension JSONScanner {
    /// Reads a string whose opening quote is at `index`; leaves `index` just after the closing quote.
    ///
    /// The common case (no escapes) becomes a `String` straight from the input bytes; a string
    /// with escapes is rebuilt in `scratch`. Either way every byte is checked: RFC 8259 forbids
    /// raw control characters, and RFC 3629 UTF-8 excludes overlong forms, surrogates and
    /// anything above U+10FFFF.
    mutating func parseString() throws(JSONParseError) -> String {
        let start = index + 1
        var i = start
        let count = bytes.count
        while i < count {
            let byte = bytes[i]
            if byte == JSONByte.quote {
                index = i + 1
                return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
            } else if byte == JSONByte.backslash {
                return try parseEscapedString(start: start, firstEscape: i)
            } else if byte < 0x20 {
                throw JSONParseError(.controlCharacterInString(byte), at: i)
            } else if byte < 0x80 {
                i += 1
            } else {
                i = try endOfUTF8Sequence(at: i)
            }
        }
        throw JSONParseError(.unexpectedEndOfInput, at: count)
    }

    private mutating func parseEscapedString(start: Int, firstEscape: Int) throws(JSONParseError) -> String {
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<firstEscape]))
        var i = firstEscape
        let count = bytes.count
        while i < count {
            let byte = bytes[i]
            if byte == JSONByte.quote {
                index = i + 1
                return String(decoding: scratch, as: UTF8.self)
            } else if byte == JSONByte.backslash {
                i = try appendEscape(at: i)
            } else if byte < 0x20 {
                throw JSONParseError(.controlCharacterInString(byte), at: i)
            } else if byte < 0x80 {
                scratch.append(byte)
                i += 1
            } else {
                let next = try endOfUTF8Sequence(at: i)
                scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[i..<next]))
                i = next
            }
        }
        throw JSONParseError(.unexpectedEndOfInput, at: count)
    }

    /// Appends the character escaped at `i` (a backslash) to `scratch`; returns the index after the escape.
    private mutating func appendEscape(at i: Int) throws(JSONParseError) -> Int {
        guard i + 1 < bytes.count else { throw JSONParseError(.unexpectedEndOfInput, at: bytes.count) }
        let escaped = bytes[i + 1]
        switch escaped {
        case JSONByte.quote, JSONByte.backslash, JSONByte.slash: scratch.append(escaped)
        case 0x62: scratch.append(0x08)  // b
        case 0x66: scratch.append(0x0C)  // f
        case 0x6E: scratch.append(0x0A)  // n
        case 0x72: scratch.append(0x0D)  // r
        case 0x74: scratch.append(0x09)  // t
        case JSONByte.u: return try appendUnicodeEscape(at: i)
        default: throw JSONParseError(.invalidEscape(escaped), at: i + 1)
        }
        return i + 2
    }

    /// Appends `\uXXXX` (or a `\uD8xx\uDCxx` surrogate pair) at `i` as UTF-8; returns the index after it.
    private mutating func appendUnicodeEscape(at i: Int) throws(JSONParseError) -> Int {
        let unit = try hexQuad(at: i + 2)
        var next = i + 6
        let scalar: UInt32
        switch unit {
        case 0xD800...0xDBFF:
            guard next + 1 < bytes.count else {
                if next >= bytes.count || bytes[next] == JSONByte.backslash {
                    throw JSONParseError(.unexpectedEndOfInput, at: bytes.count)
                }
                throw JSONParseError(.loneSurrogate(unit), at: i)
            }
            guard bytes[next] == JSONByte.backslash, bytes[next + 1] == JSONByte.u else {
                throw JSONParseError(.loneSurrogate(unit), at: i)
            }
            let low = try hexQuad(at: next + 2)
            guard (0xDC00...0xDFFF).contains(low) else { throw JSONParseError(.loneSurrogate(unit), at: i) }
            scalar = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
            next += 6
        case 0xDC00...0xDFFF:
            throw JSONParseError(.loneSurrogate(unit), at: i)
        default:
            scalar = UInt32(unit)
        }
        appendUTF8(scalar)
        return next
    }

    /// The four hexadecimal digits at `i` as a UTF-16 code unit.
    private func hexQuad(at i: Int) throws(JSONParseError) -> UInt16 {
        guard i + 4 <= bytes.count else { throw JSONParseError(.unexpectedEndOfInput, at: bytes.count) }
        var unit: UInt16 = 0
        for k in i..<(i + 4) {
            let byte = bytes[k]
            let digit: UInt8
            switch byte {
            case 0x30...0x39: digit = byte - 0x30
            case 0x41...0x46: digit = byte - 0x41 + 10
            case 0x61...0x66: digit = byte - 0x61 + 10
            default: throw JSONParseError(.invalidUnicodeEscape, at: k)
            }
            unit = unit << 4 | UInt16(digit)
        }
        return unit
    }

    private mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case ..<0x80:
            scratch.append(UInt8(scalar))
        case ..<0x800:
            scratch.append(UInt8(0xC0 | scalar >> 6))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        case ..<0x10000:
            scratch.append(UInt8(0xE0 | scalar >> 12))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        default:
            scratch.append(UInt8(0xF0 | scalar >> 18))
            scratch.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    /// Checks the multi-byte UTF-8 sequence whose lead byte is at `i`; returns the index after it.
    ///
    /// The ranges are RFC 3629's table: the second byte's range depends on the lead byte so that
    /// overlong forms (C0, C1, E0 80–9F, F0 80–8F), surrogates (ED A0–BF) and code points above
    /// U+10FFFF (F4 90–, F5–FF) are rejected.
    private func endOfUTF8Sequence(at i: Int) throws(JSONParseError) -> Int {
        let lead = bytes[i]
        let length: Int
        var lower: UInt8 = 0x80
        var upper: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0:
            length = 3
            lower = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED:
            length = 3
            upper = 0x9F
        case 0xF0:
            length = 4
            lower = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4:
            length = 4
            upper = 0x8F
        default: throw JSONParseError(.invalidUTF8, at: i)
        }
        for k in 1..<length {
            guard i + k < bytes.count else { throw JSONParseError(.unexpectedEndOfInput, at: bytes.count) }
            let byte = bytes[i + k]
            let valid = k == 1 ? (lower...upper).contains(byte) : (0x80...0xBF).contains(byte)
            guard valid else { throw JSONParseError(.invalidUTF8, at: i + k) }
        }
        return i + length
    }
}
