extension JSONScanner {
    /// Reads a number at `index` (RFC 8259: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`).
    ///
    /// Digits-only numbers that fit in `Int64` are accumulated exactly and become `.int` (`-0`
    /// is `.int(0)`); the rest are converted by the standard library's correctly rounded
    /// decimal-to-double conversion. Infinity is never produced: a magnitude beyond
    /// `Double.greatestFiniteMagnitude` is `numberOutOfRange` (±infinity only with
    /// `readsOutOfRangeNumbersAsInfinity`, for text stored by earlier versions).
    mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = index
        let count = bytes.count
        var i = index
        let isNegative = bytes[i] == JSONByte.minus
        if isNegative { i += 1 }
        guard i < count else { throw JSONParseError(.unexpectedEndOfInput, at: count) }

        var magnitude: UInt64 = 0
        var overflowed = false
        switch bytes[i] {
        case JSONByte.zero:
            i += 1
            if i < count, isDigit(bytes[i]) { throw JSONParseError(.invalidNumber, at: i) }
        case JSONByte.one...JSONByte.nine:
            while i < count, isDigit(bytes[i]) {
                let digit = UInt64(bytes[i] &- JSONByte.zero)
                let (times10, o1) = magnitude.multipliedReportingOverflow(by: 10)
                let (sum, o2) = times10.addingReportingOverflow(digit)
                overflowed = overflowed || o1 || o2
                magnitude = sum
                i += 1
            }
        default:
            throw JSONParseError(.invalidNumber, at: i)
        }

        var isInteger = true
        if i < count, bytes[i] == JSONByte.period {
            isInteger = false
            i += 1
            i = try endOfDigits(from: i)
        }
        if i < count, bytes[i] == JSONByte.lowerE || bytes[i] == JSONByte.upperE {
            isInteger = false
            i += 1
            if i < count, bytes[i] == JSONByte.plus || bytes[i] == JSONByte.minus { i += 1 }
            i = try endOfDigits(from: i)
        }
        index = i

        if isInteger, !overflowed {
            if !isNegative, magnitude <= UInt64(Int64.max) { return .int(Int64(magnitude)) }
            if isNegative, magnitude <= UInt64(Int64.max) { return .int(-Int64(magnitude)) }
            if isNegative, magnitude == UInt64(Int64.max) + 1 { return .int(.min) }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
        guard let value = Double(text), value.isFinite || readsOutOfRangeNumbersAsInfinity else {
            throw JSONParseError(.numberOutOfRange, at: start)
        }
        return .double(value)
    }

    /// Skips one or more digits starting at `i`; returns the index after them.
    private func endOfDigits(from i: Int) throws(JSONParseError) -> Int {
        guard i < bytes.count else { throw JSONParseError(.unexpectedEndOfInput, at: bytes.count) }
        guard isDigit(bytes[i]) else { throw JSONParseError(.invalidNumber, at: i) }
        var end = i + 1
        while end < bytes.count, isDigit(bytes[end]) { end += 1 }
        return end
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte &- JSONByte.zero < 10
    }
}
