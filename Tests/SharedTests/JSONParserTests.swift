import Foundation
import TestSupport
import Testing

@testable import ContextBusSupport

struct JSONParserTests {
    private func parse(_ text: String, maximumDepth: Int = 512) throws(JSONParseError) -> JSONValue {
        try JSONParser(maximumDepth: maximumDepth).parse(text)
    }

    private func parse(bytes: [UInt8]) throws(JSONParseError) -> JSONValue {
        try JSONParser().parse(bytes)
    }

    private func error(_ text: String) -> JSONParseError? {
        error(bytes: Array(text.utf8))
    }

    private func error(bytes: [UInt8]) -> JSONParseError? {
        do {
            _ = try JSONParser().parse(bytes)
            return nil
        } catch {
            return error
        }
    }

    // MARK: - Well-formed input

    @Test func readsEveryKindOfValue() throws {
        let value = try parse(#" {"n":null,"t":true,"f":false,"i":-42,"d":2.5,"s":"hi","a":[1,[]],"o":{}} "#)
        expectEqual(
            value,
            .object([
                "n": .null, "t": .bool(true), "f": .bool(false), "i": .int(-42), "d": .double(2.5),
                "s": .string("hi"), "a": .array([.int(1), .array([])]), "o": .object([:]),
            ]))
    }

    @Test func readsScalarDocuments() throws {
        try expectEqual(parse("7"), .int(7))
        try expectEqual(parse("\"x\""), .string("x"))
        try expectEqual(parse(" null\n"), .null)
        try expectEqual(parse("\ttrue\r\n"), .bool(true))
    }

    @Test func decodesEveryEscape() throws {
        expectEqual(
            try parse(#""\" \\ \/ \b \f \n \r \t \u0041 \u00e9 \u20AC""#), .string("\" \\ / \u{8} \u{C} \n \r \t A é €")
        )
    }

    @Test func decodesSurrogatePairEscapesIntoOneScalar() throws {
        try expectEqual(parse(#""\uD83D\uDE00""#), .string("😀"))
        expectEqual(try parse(#""a\udbff\udfffb""#), .string("a\u{10FFFF}b"))
    }

    @Test func keepsRawMultiByteUTF8() throws {
        try expectEqual(parse("\"é€😀中\""), .string("é€😀中"))
        expectEqual(try parse("{\"ключ\":\"значение\"}"), .object(["ключ": .string("значение")]))
    }

    @Test func readsEscapedNULAsACharacter() throws {
        let value = try parse(#""a\u0000b""#)
        expectEqual(value, .string("a\u{0}b"))
        expectEqual(value.stringValue?.utf8.count, 3)
    }

    @Test func readsIntegersThatFitInt64Exactly() throws {
        try expectEqual(parse("9223372036854775807"), .int(.max))
        try expectEqual(parse("-9223372036854775808"), .int(.min))
        try expectEqual(parse("0"), .int(0))
        try expectEqual(parse("-0"), .int(0))
    }

    @Test func readsFractionsAndExponentsAsDoubles() throws {
        try expectEqual(parse("1.0"), .double(1))
        try expectEqual(parse("1e2"), .double(100))
        try expectEqual(parse("-2.5E-3"), .double(-0.0025))
        try expectEqual(parse("0.1"), .double(0.1))
        try expectEqual(parse("1e-400"), .double(0))
    }

    // MARK: - Hostile input

    @Test func readsHugeIntegersAsDoublesInsteadOfCrashing() throws {
        try expectEqual(parse("9223372036854775808"), .double(9_223_372_036_854_775_808))
        try expectEqual(parse("-9223372036854775809"), .double(-9_223_372_036_854_775_808))
        try expectEqual(parse("123456789012345678901234567890"), .double(1.2345678901234568e29))
    }

    @Test func rejectsNumbersBeyondTheRangeOfADouble() {
        expectEqual(error("1e400"), JSONParseError(.numberOutOfRange, at: 0))
        expectEqual(error("[-1e309]"), JSONParseError(.numberOutOfRange, at: 1))
        expectEqual(error(String(repeating: "9", count: 400)), JSONParseError(.numberOutOfRange, at: 0))
    }

    @Test(arguments: [
        ("01", 1), ("-", 1), ("-a", 1), ("1.", 2), ("1.e3", 2), ("1e", 2), ("1e+", 3), (".5", 0), ("+1", 0),
        ("NaN", 0), ("Infinity", 0), ("-Infinity", 1), ("0x10", 1),
    ])
    func rejectsMalformedNumbers(text: String, offset: Int) {
        let failure = error(text)
        expectEqual(failure?.offset, offset, "\(text): \(String(describing: failure))")
    }

    @Test func rejectsNestingDeeperThanTheLimit() {
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        expectEqual(error(deep), JSONParseError(.tooDeep(limit: 512), at: 512))
        let objects = String(repeating: #"{"a":"#, count: 513) + "1" + String(repeating: "}", count: 513)
        expectEqual(error(objects)?.reason, .tooDeep(limit: 512))
    }

    @Test func acceptsNestingExactlyAtTheLimit() throws {
        let atLimit = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        _ = try parse(atLimit)
    }

    @Test func honoursAConfiguredDepthLimit() throws {
        #expect(throws: JSONParseError(.tooDeep(limit: 2), at: 2)) { try parse("[[[1]]]", maximumDepth: 2) }
        try expectEqual(parse("[[1]]", maximumDepth: 2), .array([.array([.int(1)])]))
    }

    @Test func survivesAMillionOpeningBrackets() {
        let hostile = [UInt8](repeating: JSONByteTable.openBracket, count: 1_000_000)
        expectEqual(error(bytes: hostile)?.reason, .tooDeep(limit: 512))
    }

    @Test(arguments: [
        ([0x22, 0xC0, 0x80, 0x22], 1),  // overlong NUL
        ([0x22, 0xE0, 0x80, 0xAF, 0x22], 2),  // overlong three-byte form
        ([0x22, 0xED, 0xA0, 0x80, 0x22], 2),  // UTF-8-encoded surrogate U+D800
        ([0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], 2),  // above U+10FFFF
        ([0x22, 0xF5, 0x80, 0x80, 0x80, 0x22], 1),  // lead byte that never occurs
        ([0x22, 0x80, 0x22], 1),  // lone continuation byte
        ([0x22, 0xE2, 0x82, 0x22], 3),  // sequence cut short by the quote
        ([0x22, 0x61, 0xFF, 0x22], 2),
    ])
    func rejectsInvalidUTF8InStrings(bytes: [UInt8], offset: Int) {
        expectEqual(error(bytes: bytes), JSONParseError(.invalidUTF8, at: offset))
    }

    @Test func rejectsNonASCIIBytesOutsideStrings() {
        expectEqual(error(bytes: [0xEF, 0xBB, 0xBF, 0x31]), JSONParseError(.unexpectedByte(0xEF), at: 0))
        expectEqual(error(bytes: [0x5B, 0xC3, 0xA9, 0x5D]), JSONParseError(.unexpectedByte(0xC3), at: 1))
    }

    @Test(arguments: [
        (#""\uD800""#, 1), (#""\uDC00""#, 1), (#""\uD800\u0041""#, 1), (#""\uD800x""#, 1), (#""ab\uDBFF\uDBFF""#, 3),
        (#""\uDE00\uD83D""#, 1),
    ])
    func rejectsLoneSurrogateEscapes(text: String, offset: Int) {
        let failure = error(text)
        expectEqual(failure?.offset, offset)
        if case .loneSurrogate = failure?.reason {} else { Issue.record("\(text): \(String(describing: failure))") }
    }

    @Test func rejectsRawControlCharactersInStrings() {
        expectEqual(error(bytes: [0x22, 0x61, 0x00, 0x22]), JSONParseError(.controlCharacterInString(0), at: 2))
        expectEqual(error("\"a\tb\""), JSONParseError(.controlCharacterInString(9), at: 2))
        expectEqual(error("\"a\\n\nb\""), JSONParseError(.controlCharacterInString(10), at: 4))
    }

    @Test func rejectsInvalidEscapes() {
        expectEqual(error(#""\x""#), JSONParseError(.invalidEscape(0x78), at: 2))
        expectEqual(error(#""\u12G4""#), JSONParseError(.invalidUnicodeEscape, at: 5))
        expectEqual(error(#""\'""#), JSONParseError(.invalidEscape(0x27), at: 2))
    }

    @Test func reportsEveryTruncationOfADocumentAsEndOfInputAtItsLength() {
        let document = Array(#"{"a":[1,-2.5e3,"x\u00e9\uD83D\uDE00",true,false,null],"b":{"c":"é"}}"#.utf8)
        for length in 0..<document.count {
            let failure = error(bytes: Array(document[..<length]))
            expectEqual(failure, JSONParseError(.unexpectedEndOfInput, at: length), "prefix of \(length) bytes")
        }
        expectNil(error(bytes: document))
    }

    @Test func rejectsTrailingGarbage() {
        expectEqual(error("{} x"), JSONParseError(.trailingData, at: 3))
        expectEqual(error("1 2"), JSONParseError(.trailingData, at: 2))
        expectEqual(error("[]]"), JSONParseError(.trailingData, at: 2))
        expectEqual(error(bytes: [0x31, 0x00]), JSONParseError(.trailingData, at: 1))
    }

    @Test func reportsTheOffsetOfAnUnexpectedByte() {
        expectEqual(error("[1,}"), JSONParseError(.unexpectedByte(0x7D), at: 3))
        expectEqual(error(#"{"a" 1}"#), JSONParseError(.unexpectedByte(0x31), at: 5))
        expectEqual(error("{1:2}"), JSONParseError(.unexpectedByte(0x31), at: 1))
        expectEqual(error("[1 2]"), JSONParseError(.unexpectedByte(0x32), at: 3))
        expectEqual(error("[1,]"), JSONParseError(.unexpectedByte(0x5D), at: 3))
        expectEqual(error("tru"), JSONParseError(.unexpectedEndOfInput, at: 3))
        expectEqual(error("trUe"), JSONParseError(.unexpectedByte(0x55), at: 2))
    }

    @Test func rejectsEmptyAndBlankInput() {
        expectEqual(error(""), JSONParseError(.unexpectedEndOfInput, at: 0))
        expectEqual(error(" \n "), JSONParseError(.unexpectedEndOfInput, at: 3))
    }

    @Test func rejectsDuplicateKeysUnlessAskedToKeepTheLast() throws {
        expectEqual(error(#"{"a":1, "a":2}"#), JSONParseError(.duplicateKey("a"), at: 8))
        let lenient = JSONParser(rejectsDuplicateKeys: false)
        expectEqual(try lenient.parse(#"{"a":1,"a":2}"#), .object(["a": .int(2)]))
    }

    @Test func describesErrorsOnOneLine() {
        let text = JSONParseError(.unexpectedByte(0x7D), at: 12).description
        expectEqual(text, "invalid JSON at byte 12: unexpected byte 0x7d ('}')")
        expectFalse(JSONParseError(.loneSurrogate(0xD800), at: 0).description.contains("\n"))
    }

    @Test func readsDataArraySlicesAndNonContiguousCollections() throws {
        let bytes = Array("xx[1,2]yy".utf8)
        try expectEqual(JSONParser().parse(bytes[2..<7]), .array([.int(1), .int(2)]))
        try expectEqual(JSONParser().parse(Data("[3]".utf8)), .array([.int(3)]))
        let lazy = Array("[4]".utf8).lazy.map { $0 }
        try expectEqual(JSONParser().parse(lazy), .array([.int(4)]))
    }

    @Test func neverCrashesOnMutatedDocuments() {
        var random = RandomJSON(seed: 0xF0F0)
        var rejected = 0
        for _ in 0..<400 {
            var bytes = try! JSONWriter().bytes(random.document())
            for _ in 0..<Int.random(in: 1...3, using: &random.generator) where !bytes.isEmpty {
                let at = Int.random(in: 0..<bytes.count, using: &random.generator)
                bytes[at] = UInt8.random(in: 0...255, using: &random.generator)
            }
            if let failure = error(bytes: bytes) {
                rejected += 1
                expectTrue(failure.offset >= 0 && failure.offset <= bytes.count)
            }
        }
        expectGreaterThan(rejected, 100)
    }

    @Test func readsANumberBeyondDoublesRangeAsInfinityOnlyWhenAskedForStoredText() throws {
        #expect(throws: JSONParseError(.numberOutOfRange, at: 1)) { try parse("[1e999]") }
        var stored = JSONParser()
        stored.readsOutOfRangeNumbersAsInfinity = true
        expectEqual(
            try stored.parse("[1e999,-1e999,1e-999,1.5]"),
            .array([.double(.infinity), .double(-.infinity), .double(0), .double(1.5)]))
        #expect(throws: JSONParseError.self) { try stored.parse("NaN") }
    }
}

private enum JSONByteTable {
    static let openBracket: UInt8 = 0x5B
}
