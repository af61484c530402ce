/// Writes a `JSONValue` as compact RFC 8259 JSON text (UTF-8, no insignificant whitespace): the
/// one JSON writer of ContextBus (wire messages, stored `json` values, history rows, the stored
/// model, ctxbus output).
///
/// - Integers are written exactly; doubles in the shortest form that reads back as the same
///   `Double` (always with a `.` or an exponent, so they read back as `.double`, never `.int`).
/// - NaN and ±infinity have no JSON form: writing one throws `JSONWriteError.nonFiniteNumber`
///   rather than emitting invalid JSON or silently changing the value to `null`. That is the
///   rule everywhere (docs/wire-format.md, "NaN and infinities"): values that would need one are
///   refused where they enter (the stores' validation, a model's defaults).
/// - Strings escape `"` and `\` and every control character U+0000–U+001F (as `\n`, `\t`, … or
///   `\u00XX`); everything else, `/` and non-ASCII included, is written as UTF-8.
/// - Object members are written in dictionary order, or sorted by key (Swift `String` order,
///   which compares Unicode scalar values) when `sortsKeys` is set, for deterministic output:
///   equal values give equal text (what the stores write, what ctxbus prints).
///
/// Nesting is written recursively: values built in code must not be nested more deeply than
/// the thread's stack allows (anything `JSONParser` returns is bounded by its `maximumDepth`).
public struct JSONWriter: Sendable {
    /// Whether object members are written in key order.
    public var sortsKeys: Bool

    public init(sortsKeys: Bool = false) {
        self.sortsKeys = sortsKeys
    }

    /// Appends the JSON text of `value` to `output`.
    ///
    /// - Throws: `JSONWriteError.nonFiniteNumber` for NaN or infinity; `output` then holds a partial document.
    public func write(_ value: JSONValue, into output: inout [UInt8]) throws(JSONWriteError) {
        switch value {
        case .null: JSONWriter.appendLiteral("null", into: &output)
        case .bool(let b): JSONWriter.appendLiteral(b ? "true" : "false", into: &output)
        case .int(let i): JSONWriter.appendInteger(i, into: &output)
        case .double(let d): try JSONWriter.appendDouble(d, into: &output)
        case .string(let s): JSONWriter.appendString(s, into: &output)
        case .array(let elements):
            output.append(JSONByte.openBracket)
            for (n, element) in elements.enumerated() {
                if n > 0 { output.append(JSONByte.comma) }
                try write(element, into: &output)
            }
            output.append(JSONByte.closeBracket)
        case .object(let members):
            output.append(JSONByte.openBrace)
            if sortsKeys {
                for (n, key) in members.keys.sorted().enumerated() {
                    try writeMember(key, members[key]!, first: n == 0, into: &output)
                }
            } else {
                var first = true
                for (key, member) in members {
                    try writeMember(key, member, first: first, into: &output)
                    first = false
                }
            }
            output.append(JSONByte.closeBrace)
        }
    }

    private func writeMember(
        _ key: String, _ value: JSONValue, first: Bool, into output: inout [UInt8]
    )
        throws(JSONWriteError)
    {
        if !first { output.append(JSONByte.comma) }
        JSONWriter.appendString(key, into: &output)
        output.append(JSONByte.colon)
        try write(value, into: &output)
    }

    /// The JSON text of `value` as UTF-8 bytes.
    ///
    /// - Throws: `JSONWriteError.nonFiniteNumber` for NaN or infinity.
    public func bytes(_ value: JSONValue) throws(JSONWriteError) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(128)
        try write(value, into: &output)
        return output
    }

    /// The JSON text of `value` as a string.
    ///
    /// - Throws: `JSONWriteError.nonFiniteNumber` for NaN or infinity.
    public func string(_ value: JSONValue) throws(JSONWriteError) -> String {
        String(decoding: try bytes(value), as: UTF8.self)
    }

    // MARK: - Scalars (also used by writers of fixed envelopes)

    /// Appends bytes that need no escaping (a literal, a fixed member name with its quotes).
    public static func appendLiteral(_ literal: StaticString, into output: inout [UInt8]) {
        output.append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    /// Appends `value` in decimal.
    public static func appendInteger(_ value: Int64, into output: inout [UInt8]) {
        var magnitude = value.magnitude
        if value < 0 { output.append(JSONByte.minus) }
        if magnitude < 10 {
            output.append(JSONByte.zero + UInt8(magnitude))
            return
        }
        let start = output.count
        while magnitude > 0 {
            output.append(JSONByte.zero + UInt8(magnitude % 10))
            magnitude /= 10
        }
        output[start...].reverse()
    }

    /// Appends `value` in its shortest round-tripping form.
    ///
    /// - Throws: `JSONWriteError.nonFiniteNumber` for NaN or infinity.
    public static func appendDouble(_ value: Double, into output: inout [UInt8]) throws(JSONWriteError) {
        guard value.isFinite else { throw .nonFiniteNumber(value) }
        // Swift's description is the shortest digit string that parses back to the same double,
        // like "0.1", "5.0", "1e-07" or "1.2345e+300": all valid JSON numbers.
        output.append(contentsOf: value.description.utf8)
    }

    /// Appends `value` as a quoted, escaped JSON string.
    public static func appendString(_ value: String, into output: inout [UInt8]) {
        output.append(JSONByte.quote)
        let handled: Void? = value.utf8.withContiguousStorageIfAvailable { appendEscaped($0, into: &output) }
        if handled == nil {
            var copy = value
            copy.makeContiguousUTF8()
            copy.utf8.withContiguousStorageIfAvailable { appendEscaped($0, into: &output) }
        }
        output.append(JSONByte.quote)
    }

    private static func appendEscaped(_ utf8: UnsafeBufferPointer<UInt8>, into output: inout [UInt8]) {
        var runStart = 0
        for i in 0..<utf8.count {
            let byte = utf8[i]
            guard byte < 0x20 || byte == JSONByte.quote || byte == JSONByte.backslash else { continue }
            if runStart < i { output.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<i])) }
            runStart = i + 1
            output.append(JSONByte.backslash)
            switch byte {
            case JSONByte.quote, JSONByte.backslash: output.append(byte)
            case 0x08: output.append(0x62)  // b
            case 0x0C: output.append(0x66)  // f
            case 0x0A: output.append(0x6E)  // n
            case 0x0D: output.append(0x72)  // r
            case 0x09: output.append(0x74)  // t
            default:
                output.append(JSONByte.u)
                output.append(JSONByte.zero)
                output.append(JSONByte.zero)
                output.append(hexDigits[Int(byte >> 4)])
                output.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        if runStart < utf8.count { output.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...])) }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
}

/// Why `JSONWriter` could not write a value.
public enum JSONWriteError: Error, Sendable, Hashable, CustomStringConvertible {
    /// NaN or an infinity, which JSON cannot represent.
    case nonFiniteNumber(Double)

    public var description: String {
        switch self {
        case .nonFiniteNumber(let d): return "cannot write \(d) as JSON: only finite numbers have a JSON form"
        }
    }
}
