/// Compact JSON text for `JSONValue`: what a `json` column and the history table store.
///
/// Object members are written in sorted key order so that equal values give equal text. Doubles
/// are written in their shortest round-trip form (always with a `.` or an exponent, so that they
/// read back as doubles); infinities as `±1e999`; NaN as `null`.
package enum JSONText {
    /// The compact text of `value`.
    package static func write(_ value: JSONValue) -> String {
        var text = ""
        write(value, into: &text)
        return text
    }

    /// Appends the compact text of `value` to `text`.
    package static func write(_ value: JSONValue, into text: inout String) {
        switch value {
        case .null: text += "null"
        case .bool(let b): text += b ? "true" : "false"
        case .int(let i): text += String(i)
        case .double(let d): writeDouble(d, into: &text)
        case .string(let s): writeString(s, into: &text)
        case .array(let items):
            text += "["
            for (i, item) in items.enumerated() {
                if i > 0 { text += "," }
                write(item, into: &text)
            }
            text += "]"
        case .object(let members):
            text += "{"
            for (i, key) in members.keys.sorted().enumerated() {
                if i > 0 { text += "," }
                writeString(key, into: &text)
                text += ":"
                write(members[key]!, into: &text)
            }
            text += "}"
        }
    }

    package static func writeDouble(_ d: Double, into text: inout String) {
        if d.isNaN {
            text += "null"
        } else if d.isInfinite {
            text += d < 0 ? "-1e999" : "1e999"
        } else {
            let s = d.description
            text += s
            if !s.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) { text += ".0" }
        }
    }

    package static func writeString(_ s: String, into text: inout String) {
        text += "\""
        // Fast path: nothing to escape (the common case), append the whole string at once.
        if !s.utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) {
            text += s
            text += "\""
            return
        }
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }

    /// Parses JSON text (as written by `write`, or any valid JSON); `nil` when it is not valid.
    package static func parse(_ text: String) -> JSONValue? {
        var parser = JSONTextParser(bytes: Array(text.utf8))
        guard let value = parser.parseValue() else { return nil }
        parser.skipWhitespace()
        return parser.isAtEnd ? value : nil
    }
}

/// A recursive-descent JSON parser over UTF-8 bytes; integers stay `int` when they fit 64 bits.
private struct JSONTextParser {
    let bytes: [UInt8]
    var index = 0
    var depth = 0

    var isAtEnd: Bool { index == bytes.count }

    mutating func skipWhitespace() {
        while index < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[index]) { index += 1 }
    }

    mutating func parseValue() -> JSONValue? {
        skipWhitespace()
        guard index < bytes.count, depth < 512 else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "{"): return parseObject()
        case UInt8(ascii: "["): return parseArray()
        case UInt8(ascii: "\""): return parseString().map(JSONValue.string)
        case UInt8(ascii: "t"): return literal("true", .bool(true))
        case UInt8(ascii: "f"): return literal("false", .bool(false))
        case UInt8(ascii: "n"): return literal("null", .null)
        default: return parseNumber()
        }
    }

    private mutating func literal(_ word: String, _ value: JSONValue) -> JSONValue? {
        let utf8 = Array(word.utf8)
        guard index + utf8.count <= bytes.count, Array(bytes[index..<index + utf8.count]) == utf8 else { return nil }
        index += utf8.count
        return value
    }

    private mutating func parseObject() -> JSONValue? {
        index += 1
        depth += 1
        defer { depth -= 1 }
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\""), let key = parseString() else { return nil }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
            index += 1
            guard let value = parseValue() else { return nil }
            members[key] = value
            skipWhitespace()
            guard index < bytes.count else { return nil }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            } else {
                return nil
            }
        }
    }

    private mutating func parseArray() -> JSONValue? {
        index += 1
        depth += 1
        defer { depth -= 1 }
        var items: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(items)
        }
        while true {
            guard let value = parseValue() else { return nil }
            items.append(value)
            skipWhitespace()
            guard index < bytes.count else { return nil }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(items)
            } else {
                return nil
            }
        }
    }

    private mutating func parseString() -> String? {
        index += 1
        var scalars = String.UnicodeScalarView()
        var start = index
        var plain: [UInt8] = []
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                plain.append(contentsOf: bytes[start..<index])
                index += 1
                guard let tail = String(validating: plain, as: UTF8.self) else { return nil }
                scalars.append(contentsOf: tail.unicodeScalars)
                return String(scalars)
            }
            if byte < 0x20 { return nil }
            if byte == UInt8(ascii: "\\") {
                plain.append(contentsOf: bytes[start..<index])
                guard let chunk = String(validating: plain, as: UTF8.self) else { return nil }
                scalars.append(contentsOf: chunk.unicodeScalars)
                plain.removeAll(keepingCapacity: true)
                index += 1
                guard index < bytes.count else { return nil }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "/"): scalars.append("/")
                case UInt8(ascii: "b"): scalars.append("\u{08}")
                case UInt8(ascii: "f"): scalars.append("\u{0C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    guard var code = hex4() else { return nil }
                    if (0xD800..<0xDC00).contains(code) {
                        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                            bytes[index + 1] == UInt8(ascii: "u")
                        else { return nil }
                        index += 2
                        guard let low = hex4(), (0xDC00..<0xE000).contains(low) else { return nil }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else { return nil }
                    scalars.append(scalar)
                default: return nil
                }
                start = index
                continue
            }
            index += 1
        }
        return nil
    }

    private mutating func hex4() -> UInt32? {
        guard index + 4 <= bytes.count else { return nil }
        var value: UInt32 = 0
        for byte in bytes[index..<index + 4] {
            guard let digit = Self.hexDigit(byte) else { return nil }
            value = value * 16 + digit
        }
        index += 4
        return value
    }

    private static func hexDigit(_ byte: UInt8) -> UInt32? {
        switch byte {
        case 0x30...0x39: return UInt32(byte - 0x30)
        case 0x41...0x46: return UInt32(byte - 0x41 + 10)
        case 0x61...0x66: return UInt32(byte - 0x61 + 10)
        default: return nil
        }
    }

    private mutating func parseNumber() -> JSONValue? {
        let start = index
        var isInteger = true
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        let digitsStart = index
        while index < bytes.count {
            let byte = bytes[index]
            if (0x30...0x39).contains(byte) {
                index += 1
            } else if byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E")
                || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-")
            {
                isInteger = false
                index += 1
            } else {
                break
            }
        }
        guard index > digitsStart, let text = String(validating: bytes[start..<index], as: UTF8.self) else {
            return nil
        }
        if isInteger, let i = Int64(text) { return .int(i) }
        guard let d = Double(text) else { return nil }
        return .double(d)
    }
}
