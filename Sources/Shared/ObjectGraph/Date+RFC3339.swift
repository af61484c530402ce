public import Foundation

extension Date {
    /// The protocol's date form: RFC 3339 with fractional seconds (milliseconds), in UTC,
    /// for example `2026-11-21T23:55:20.123Z`.
    public var rfc3339String: String {
        var seconds = timeIntervalSince1970.rounded(.down)
        var millis = Int(((timeIntervalSince1970 - seconds) * 1000).rounded())
        if millis == 1000 {
            seconds += 1
            millis = 0
        }
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        let year = Int(parts.tm_year) + 1900
        guard (0...9999).contains(year) else {
            // Outside four digits (never on the wire in practice): the general formatter's rendering.
            return String(
                format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", year, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
                Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), millis)
        }
        // Written digit by digit: `String(format:)` costs microseconds per date, and every date in a
        // `store.changed` event or a save's answer goes through here.
        return String(unsafeUninitializedCapacity: 24) { buffer in
            func put(_ value: Int, digits: Int, at offset: Int) {
                var value = value
                for index in stride(from: offset + digits - 1, through: offset, by: -1) {
                    buffer[index] = UInt8(truncatingIfNeeded: 48 + value % 10)
                    value /= 10
                }
            }
            put(year, digits: 4, at: 0)
            buffer[4] = 45  // -
            put(Int(parts.tm_mon) + 1, digits: 2, at: 5)
            buffer[7] = 45  // -
            put(Int(parts.tm_mday), digits: 2, at: 8)
            buffer[10] = 84  // T
            put(Int(parts.tm_hour), digits: 2, at: 11)
            buffer[13] = 58  // :
            put(Int(parts.tm_min), digits: 2, at: 14)
            buffer[16] = 58  // :
            put(Int(parts.tm_sec), digits: 2, at: 17)
            buffer[19] = 46  // .
            put(millis, digits: 3, at: 20)
            buffer[23] = 90  // Z
            return 24
        }
    }

    /// Parses an RFC 3339 date-time (`Z` or a numeric offset, fractional seconds optional).
    ///
    /// Fractional seconds are rounded to the millisecond, the precision `rfc3339String` writes, so that a date read
    /// and written back reads back equal (`"…00.7777Z"` is `…00.778`; the rpc fuzz target found the difference).
    /// Years outside 0…9999 are read as `rfc3339String` writes them (more digits, or a minus sign: ISO 8601's
    /// expanded years), so that such a date reads back too: a `sum` over a date attribute can be one
    /// (docs/protocol.md, "store.aggregate").
    public init?(rfc3339 string: String) {
        let utf8 = Array(string.utf8)
        // The year: four digits, or more, or a minus sign and at least three (`String(format: "%04d")`'s forms). The
        // offsets below are those of a four-digit year, moved by `shift`.
        let negative = utf8.first == 45
        var yearEnd = negative ? 1 : 0
        while yearEnd < utf8.count, utf8[yearEnd] >= 48, utf8[yearEnd] <= 57 { yearEnd += 1 }
        let yearDigits = yearEnd - (negative ? 1 : 0)
        guard yearDigits >= (negative ? 3 : 4), yearDigits <= 9 else { return nil }
        var year = 0
        for byte in utf8[(negative ? 1 : 0)..<yearEnd] { year = year * 10 + Int(byte - 48) }
        if negative { year = -year }
        let shift = yearEnd - 4
        func number(_ start: Int, _ count: Int) -> Int? {
            guard start + shift + count <= utf8.count else { return nil }
            var value = 0
            for byte in utf8[start + shift..<start + shift + count] {
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            return value
        }
        func byte(_ i: Int) -> UInt8? { i + shift < utf8.count ? utf8[i + shift] : nil }
        guard byte(4) == 45, let month = number(5, 2), byte(7) == 45,
            let day = number(8, 2), byte(10) == 84 || byte(10) == 116 || byte(10) == 32,
            let hour = number(11, 2), byte(13) == 58, let minute = number(14, 2), byte(16) == 58,
            let second = number(17, 2), (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60,
            second <= 60
        else { return nil }
        var index = 19
        var fraction = 0.0
        if byte(index) == 46 {
            index += 1
            var scale = 0.1
            let start = index
            while let b = byte(index), b >= 48, b <= 57 {
                fraction += Double(b - 48) * scale
                scale /= 10
                index += 1
            }
            guard index > start else { return nil }
        }
        var offset = 0
        switch byte(index) {
        case 90, 122:  // Z z
            index += 1
        case 43, 45:  // + -
            guard let oh = number(index + 1, 2), byte(index + 3) == 58, let om = number(index + 4, 2) else {
                return nil
            }
            offset = (oh * 3600 + om * 60) * (byte(index) == 45 ? -1 : 1)
            index += 6
        default:
            return nil
        }
        guard index + shift == utf8.count else { return nil }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        let epoch = timegm(&parts)
        self.init(timeIntervalSince1970: Double(epoch - offset) + (fraction * 1000).rounded() / 1000)
    }
}
