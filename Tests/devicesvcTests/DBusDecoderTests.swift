import TestSupport
import Testing

@testable import ContextBusDBus
@testable import devicesvc

/// Hostile and malformed input for the value decoder: every case throws, none traps.
struct DBusDecoderTests {
    private func decode(_ bytes: [UInt8], _ signature: String, bigEndian: Bool = false) throws -> [DBusValue] {
        var decoder = DBusDecoder(bytes: bytes, isBigEndian: bigEndian)
        return try decoder.read(try DBusSignature(signature))
    }

    @Test func readsBigEndianIntegers() throws {
        try expectEqual(decode([0x01, 0x02, 0x03, 0x04], "u", bigEndian: true), [.uint32(0x0102_0304)])
        try expectEqual(decode([0x01, 0x02, 0x03, 0x04], "u"), [.uint32(0x0403_0201)])
        try expectEqual(decode([0xFF, 0xFE], "n", bigEndian: true), [.int16(-2)])
    }

    @Test func truncatedIntegerThrows() {
        #expect(throws: DBusWireError.truncated(offset: 0, needed: 4)) { try decode([1, 2, 3], "u") }
    }

    @Test func nonZeroPaddingThrows() {
        #expect(throws: DBusWireError.nonZeroPadding(offset: 1)) { try decode([7, 1, 0, 0, 1, 0, 0, 0], "yu") }
    }

    @Test func aBooleanOtherThanZeroOrOneThrows() {
        #expect(throws: DBusWireError.invalidBoolean(2, offset: 0)) { try decode([2, 0, 0, 0], "b") }
    }

    @Test func anArrayLongerThan64MiBThrowsBeforeReadingIt() {
        // 64 MiB + 1 declared, with no data behind it.
        #expect(throws: DBusWireError.arrayTooLong(length: 67_108_865, limit: 67_108_864)) {
            try decode([0x01, 0x00, 0x00, 0x04], "ay")
        }
    }

    @Test func anArrayLengthBeyondTheDataThrows() {
        #expect(throws: DBusWireError.truncated(offset: 4, needed: 100)) { try decode([100, 0, 0, 0, 1, 2], "ay") }
    }

    @Test func anElementOverrunningItsArrayThrows() {
        // Array of UINT32 declared 3 bytes long: the element does not fit inside the array.
        #expect(throws: DBusWireError.truncated(offset: 4, needed: 4)) {
            try decode([3, 0, 0, 0, 1, 0, 0, 0], "au")
        }
    }

    @Test func aStringWithoutTerminatingNULThrows() {
        #expect(throws: DBusWireError.invalidString(offset: 4, reason: "missing terminating NUL")) {
            try decode([2, 0, 0, 0, UInt8(ascii: "h"), UInt8(ascii: "i"), UInt8(ascii: "!")], "s")
        }
    }

    @Test func aStringWithEmbeddedNULThrows() {
        #expect(throws: DBusWireError.invalidString(offset: 4, reason: "contains NUL")) {
            try decode([2, 0, 0, 0, UInt8(ascii: "h"), 0, 0], "s")
        }
    }

    @Test func aStringThatIsNotUTF8Throws() {
        #expect(throws: DBusWireError.invalidString(offset: 4, reason: "not UTF-8")) {
            try decode([2, 0, 0, 0, 0xC3, 0x28, 0], "s")
        }
    }

    @Test func aStringLengthNearUInt32MaxThrowsWithoutAllocating() {
        #expect(throws: DBusWireError.self) { try decode([0xFF, 0xFF, 0xFF, 0xFF, 0], "s") }
    }

    @Test func anInvalidObjectPathThrows() {
        #expect(throws: DBusWireError.invalidObjectPath("a/b")) {
            try decode([3, 0, 0, 0, UInt8(ascii: "a"), UInt8(ascii: "/"), UInt8(ascii: "b"), 0], "o")
        }
    }

    @Test func aVariantWithTwoTypesThrows() {
        #expect(throws: DBusWireError.invalidSignature("yy", reason: "expected exactly one complete type")) {
            try decode([2, UInt8(ascii: "y"), UInt8(ascii: "y"), 0, 1, 2], "v")
        }
    }

    @Test func variantsNestedAThousandDeepThrowInsteadOfOverflowingTheStack() {
        let oneVariant: [UInt8] = [1, UInt8(ascii: "v"), 0]
        var bytes: [UInt8] = []
        for _ in 0..<1000 { bytes += oneVariant }
        bytes += [1, UInt8(ascii: "y"), 0, 7]
        #expect(throws: DBusWireError.nestingTooDeep(limit: 64)) { try decode(bytes, "v") }
    }

    @Test func anEmptyArrayOfStructsSkipsItsPadding() throws {
        try expectEqual(decode([0, 0, 0, 0, 0, 0, 0, 0, 9], "a(i)y"), [.array(.structure([.int32]), []), .byte(9)])
    }
}
