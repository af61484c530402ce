import Foundation
import TestSupport
import Testing

struct DateRFC3339Tests {
    /// The formatter as it was written before the hand-written one: `String(format:)` over `gmtime_r`.
    private func formatted(_ date: Date) -> String {
        var seconds = date.timeIntervalSince1970.rounded(.down)
        var millis = Int(((date.timeIntervalSince1970 - seconds) * 1000).rounded())
        if millis == 1000 {
            seconds += 1
            millis = 0
        }
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
            Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), millis)
    }

    @Test func writesTheProtocolFormWithMilliseconds() {
        expectEqual(Date(timeIntervalSince1970: 1_795_305_320.123).rfc3339String, "2026-11-21T23:55:20.123Z")
        expectEqual(Date(timeIntervalSince1970: 0).rfc3339String, "1970-01-01T00:00:00.000Z")
    }

    @Test func roundsMillisecondsUpIntoTheNextSecond() {
        expectEqual(Date(timeIntervalSince1970: 59.9996).rfc3339String, "1970-01-01T00:01:00.000Z")
        expectEqual(Date(timeIntervalSince1970: 1_704_067_199.9999).rfc3339String, "2024-01-01T00:00:00.000Z")
    }

    @Test func agreesWithTheGeneralFormatterAcrossCenturies() {
        var generator = SystemRandomNumberGenerator()
        // Year 1 to 9999, before and after 1970, with and without fractions.
        let range = -62_135_596_800.0...253_402_300_799.0
        for _ in 0..<5_000 {
            let date = Date(timeIntervalSince1970: Double.random(in: range, using: &generator))
            expectEqual(date.rfc3339String, formatted(date), "\(date.timeIntervalSince1970)")
        }
        for seconds in [-1.0, -0.0005, -0.5, 951_782_400.0 /* 2000-02-29 */, 253_402_300_799.999] {
            let date = Date(timeIntervalSince1970: seconds)
            expectEqual(date.rfc3339String, formatted(date), "\(seconds)")
        }
    }

    @Test func yearsBeyondFourDigitsFallBackToTheGeneralFormatter() {
        let late = Date(timeIntervalSince1970: 253_402_300_800.5)  // 10000-01-01
        expectEqual(late.rfc3339String, formatted(late))
        expectTrue(late.rfc3339String.hasPrefix("10000-01-01T"))
        let early = Date(timeIntervalSince1970: -62_167_219_201)  // year -1
        expectEqual(early.rfc3339String, formatted(early))
    }

    @Test func fractionsBeyondMillisecondsAreReadRoundedSoTheyReadBackEqual() throws {
        let long = try #require(Date(rfc3339: "2024-01-01T00:00:00.7777777777777777777777777000Z"))
        expectEqual(long, Date(rfc3339: "2024-01-01T00:00:00.778Z"))
        expectEqual(long.rfc3339String, "2024-01-01T00:00:00.778Z")
        expectEqual(Date(rfc3339: long.rfc3339String), long)
        expectEqual(Date(rfc3339: "2024-01-01T00:00:00.0004Z"), Date(rfc3339: "2024-01-01T00:00:00Z"))
        // Rounded up into the next second, and before 1970.
        expectEqual(Date(rfc3339: "2023-12-31T23:59:59.9996Z"), Date(rfc3339: "2024-01-01T00:00:00.000Z"))
        let early = try #require(Date(rfc3339: "1969-12-31T23:59:59.7506Z"))
        expectEqual(early.rfc3339String, "1969-12-31T23:59:59.751Z")
        expectEqual(Date(rfc3339: early.rfc3339String), early)
    }

    @Test func readsBackWhatItWrites() {
        for seconds in [0.0, 1_795_305_320.123, -86_400.25, 253_402_300_799.999] {
            let date = Date(timeIntervalSince1970: seconds)
            let parsed = Date(rfc3339: date.rfc3339String)
            expectEqual(parsed.map { abs($0.timeIntervalSince1970 - seconds) < 0.0006 }, true, "\(seconds)")
        }
    }

    /// A `sum` over a date attribute can pass year 9999 (docs/protocol.md, "store.aggregate"): such a date, written
    /// with more digits or a minus sign, reads back.
    @Test func yearsBeyondFourDigitsReadBack() throws {
        for seconds in [253_402_300_800.5, 1.7e15 + 0.25, -62_167_219_201, -1e12] {
            let date = Date(timeIntervalSince1970: seconds)
            let parsed = try #require(Date(rfc3339: date.rfc3339String), "\(date.rfc3339String)")
            expectTrue(abs(parsed.timeIntervalSince1970 - seconds) < 0.0006, "\(seconds): \(date.rfc3339String)")
        }
        expectEqual(Date(rfc3339: "10000-01-01T00:00:00Z")?.timeIntervalSince1970, 253_402_300_800)
        for bad in [
            "999-01-01T00:00:00Z", "-01-01-01T00:00:00Z", "1234567890-01-01T00:00:00Z", "+2024-01-01T00:00:00Z",
        ] {
            expectNil(Date(rfc3339: bad), "\(bad)")
        }
    }
}
