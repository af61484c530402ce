import TestSupport
import Testing

@testable import ContextBusDBus
@testable import devicesvc

struct DBusEncoderTests {
    private func encode(_ values: [DBusValue]) throws -> [UInt8] {
        var encoder = DBusEncoder()
        try encoder.write(values)
        return encoder.bytes
    }

    @Test func anEmptyArrayStillPadsToItsElementAlignment() throws {
        // Length 0, then padding to 8 for the (absent) INT64 elements, which the length does not count.
        try expectEqual(encode([.array(.int64, [])]), [0, 0, 0, 0, 0, 0, 0, 0])
        try expectEqual(encode([.byte(9), .array(.int64, [])]), [9, 0, 0, 0, 0, 0, 0, 0])
        try expectEqual(encode([.array(.byte, [])]), [0, 0, 0, 0])
    }

    @Test func anArrayLengthCountsElementsButNotTheLeadingPadding() throws {
        try expectEqual(encode([.array(.int64, [.int64(1)])]), [8, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0])
    }

    @Test func dictEntriesAlignToEight() throws {
        let bytes = try encode([.dictionary(key: .byte, value: .byte, [DBusDictionaryEntry(.byte(1), .byte(2))])])
        expectEqual(bytes, [2, 0, 0, 0, 0, 0, 0, 0, 1, 2])
    }

    @Test func variantsCarryTheSignatureOfTheirValue() throws {
        try expectEqual(encode([.variant(.uint16(0x0102))]), [1, UInt8(ascii: "q"), 0, 0, 0x02, 0x01])
    }

    @Test func anArrayElementOfAnotherTypeIsRejected() {
        #expect(throws: DBusWireError.typeMismatch(expected: "x", actual: "s")) {
            try encode([.array(.int64, [.string("nope")])])
        }
    }

    @Test func aStructWithTheWrongFieldCountIsRejected() {
        #expect(throws: DBusWireError.typeMismatch(expected: "(is)", actual: "(i)")) {
            try encode([.array(.structure([.int32, .string]), [.structure([.int32(1)])])])
        }
    }

    @Test func aStringWithNULIsRejected() {
        #expect(throws: DBusWireError.invalidString(offset: 0, reason: "contains NUL")) {
            try encode([.string("a\u{0}b")])
        }
    }

    @Test func variantsNestedDeeperThan64AreRejected() {
        var value = DBusValue.byte(1)
        for _ in 0..<65 { value = .variant(value) }
        #expect(throws: DBusWireError.nestingTooDeep(limit: 64)) { try encode([value]) }
    }

    @Test func everyTypeRoundTripsThroughTheDecoder() throws {
        let values: [DBusValue] = [
            .byte(255), .boolean(false), .int16(.min), .uint16(.max), .int32(.min), .uint32(.max), .int64(.min),
            .uint64(.max), .double(-1.25e300), .string(""), .string("ünïcødé"), .objectPath(.root),
            .signature(try DBusSignature("a(ii)")), .unixFD(3), .variant(.variant(.strings(["x"]))),
            .structure([.byte(1), .structure([.double(2)])]),
            .dictionary(key: .int64, value: .array(.byte), [DBusDictionaryEntry(.int64(-1), .bytes([1, 2]))]),
        ]
        let bytes = try encode(values)
        var decoder = DBusDecoder(bytes: bytes, isBigEndian: false)
        let signature = try DBusSignature(values.map(\.type.signature).joined())
        try expectEqual(decoder.read(signature), values)
        expectEqual(decoder.offset, bytes.count)
    }

    @Test func anArrayOver64MiBIsRejected() {
        let chunk = String(decoding: [UInt8](repeating: UInt8(ascii: "x"), count: 33 << 20), as: UTF8.self)
        // Two strings of 4 + 33 MiB + 1 bytes, the second aligned to 4: 69_206_029 bytes of array data.
        #expect(throws: DBusWireError.arrayTooLong(length: 69_206_029, limit: 67_108_864)) {
            try encode([.strings([chunk, chunk])])
        }
    }
}
