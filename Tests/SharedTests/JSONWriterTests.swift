import Foundation
import TestSupport
import Testing

@testable import ContextBusSupport

struct JSONWriterTests {
    private func text(_ value: JSONValue, sortsKeys: Bool = true) throws -> String {
        try JSONWriter(sortsKeys: sortsKeys).string(value)
    }

    @Test func writesCompactJSONWithSortedKeys() throws {
        let value: JSONValue = .object([
            "b": .array([.int(1), .double(2.5), .null, .bool(true), .bool(false)]),
            "a": .object(["z": .string("x"), "y": .object([:])]),
            "c": .array([]),
        ])
        expectEqual(try text(value), #"{"a":{"y":{},"z":"x"},"b":[1,2.5,null,true,false],"c":[]}"#)
    }

    @Test func sortedOutputIsTheSameForEqualObjectsBuiltInDifferentOrders() throws {
        var first: [String: JSONValue] = [:]
        var second: [String: JSONValue] = [:]
        let keys = (0..<50).map { "key\($0)" }
        for key in keys { first[key] = .string(key) }
        for key in keys.reversed() { second[key] = .string(key) }
        try expectEqual(text(.object(first)), text(.object(second)))
    }

    @Test func writesIntegersExactly() throws {
        try expectEqual(text(.int(.min)), "-9223372036854775808")
        try expectEqual(text(.int(.max)), "9223372036854775807")
        try expectEqual(text(.int(0)), "0")
        try expectEqual(text(.int(-7)), "-7")
        try expectEqual(text(.int(1_000_000)), "1000000")
    }

    @Test func writesDoublesSoThatTheyReadBackAsDoubles() throws {
        try expectEqual(text(.double(5)), "5.0")
        try expectEqual(text(.double(0.1)), "0.1")
        try expectEqual(text(.double(-0.0)), "-0.0")
        try expectEqual(text(.double(1e-7)), "1e-07")
        try expectEqual(JSONParser().parse(text(.double(1e300))), .double(1e300))
    }

    @Test func roundTripsEveryFiniteDoubleBitForBit() throws {
        var generator = SeededGenerator(seed: 0xD0B1E)
        var checked = 0
        while checked < 5000 {
            let d = Double(bitPattern: generator.next())
            guard d.isFinite else { continue }
            checked += 1
            let back = try JSONParser().parse(text(.double(d)))
            guard case .double(let read) = back, read.bitPattern == d.bitPattern else {
                Issue.record("\(d) read back as \(back)")
                return
            }
        }
    }

    @Test func refusesNaNAndInfinity() {
        #expect(throws: JSONWriteError.self) { try text(.double(.nan)) }
        #expect(throws: JSONWriteError.nonFiniteNumber(.infinity)) { try text(.array([.double(.infinity)])) }
        #expect(throws: JSONWriteError.nonFiniteNumber(-.infinity)) { try text(.object(["a": .double(-.infinity)])) }
    }

    @Test func escapesQuotesBackslashesAndEveryControlCharacter() throws {
        expectEqual(try text(.string("\"\\/")), #""\"\\/""#)
        expectEqual(try text(.string("\n\r\t\u{8}\u{C}")), #""\n\r\t\b\f""#)
        expectEqual(try text(.string("a\u{0}b\u{1F}c\u{7F}")), "\"a\\u0000b\\u001fc\u{7F}\"")
        for scalar in 0..<0x20 {
            let written = try text(.string(String(Unicode.Scalar(UInt8(scalar)))))
            expectTrue(written.unicodeScalars.allSatisfy { $0.value >= 0x20 }, "U+\(scalar) written raw")
            try expectEqual(JSONParser().parse(written), .string(String(Unicode.Scalar(UInt8(scalar)))))
        }
    }

    @Test func writesNonASCIIAsRawUTF8() throws {
        expectEqual(try text(.string("é€😀\u{2028}")), "\"é€😀\u{2028}\"")
        expectEqual(try text(.object(["ключ": .int(1)])), "{\"ключ\":1}")
    }

    @Test func escapesKeysLikeValues() throws {
        expectEqual(try text(.object(["a\"b\n": .null])), #"{"a\"b\n":null}"#)
    }

    @Test func appendsToExistingOutput() throws {
        var output = Array("prefix:".utf8)
        try JSONWriter().write(.array([.int(1)]), into: &output)
        expectEqual(String(decoding: output, as: UTF8.self), "prefix:[1]")
    }

    @Test func roundTripsRandomDocumentsThroughTheParser() throws {
        var random = RandomJSON(seed: 42)
        for _ in 0..<500 {
            let value = random.document()
            let bytes = try JSONWriter().bytes(value)
            try expectEqual(JSONParser().parse(bytes), value)
        }
    }
}
