import TestSupport
import Testing

@testable import ContextBusDBus
@testable import devicesvc

struct DBusSignatureTests {
    @Test func parsesTheBlueZManagedObjectsSignature() throws {
        let signature = try DBusSignature("a{oa{sa{sv}}}")
        expectEqual(
            signature.types,
            [
                .dictionary(
                    key: .objectPath,
                    value: .dictionary(key: .string, value: .dictionary(key: .string, value: .variant)))
            ])
        expectEqual(signature.rawValue, "a{oa{sa{sv}}}")
    }

    @Test func parsesEveryBasicTypeAndContainerInSequence() throws {
        let signature = try DBusSignature("ybnqiuxtdsogvh(iay)aas")
        expectEqual(
            signature.types,
            [
                .byte, .boolean, .int16, .uint16, .int32, .uint32, .int64, .uint64, .double, .string, .objectPath,
                .signature, .variant, .unixFD, .structure([.int32, .array(.byte)]), .array(.array(.string)),
            ])
    }

    @Test func theEmptySignatureHasNoTypes() throws {
        expectTrue(try DBusSignature("").types.isEmpty)
    }

    @Test(arguments: [
        ("a", "array without an element type"),
        ("z", "unknown type code 'z'"),
        ("()", "empty struct"),
        ("(i", "unterminated struct"),
        ("i)", "unbalanced ')'"),
        ("{sv}", "dict entry outside an array"),
        ("a{vs}", "dict entry key must be a basic type"),
        ("a{(i)s}", "dict entry key must be a basic type"),
        ("a{s}", "dict entry must hold exactly a key and a value"),
        ("a{sss}", "dict entry must hold exactly a key and a value"),
        ("a{sv", "dict entry must hold exactly a key and a value"),
    ])
    func rejectsMalformedSignatures(text: String, reason: String) {
        #expect(throws: DBusWireError.invalidSignature(text, reason: reason)) { try DBusSignature(text) }
    }

    @Test func acceptsThirtyTwoNestedArraysButNotThirtyThree() throws {
        let deepest = String(repeating: "a", count: 32) + "y"
        try expectEqual(DBusSignature(deepest).types.count, 1)
        let tooDeep = "a" + deepest
        #expect(throws: DBusWireError.invalidSignature(tooDeep, reason: "arrays nest deeper than 32")) {
            try DBusSignature(tooDeep)
        }
    }

    @Test func rejectsThirtyThreeNestedStructs() {
        let tooDeep = String(repeating: "(", count: 33) + "i" + String(repeating: ")", count: 33)
        #expect(throws: DBusWireError.invalidSignature(tooDeep, reason: "structs nest deeper than 32")) {
            try DBusSignature(tooDeep)
        }
    }

    @Test func rejectsASignatureLongerThan255Bytes() {
        let long = String(repeating: "i", count: 256)
        #expect(throws: DBusWireError.invalidSignature(long, reason: "longer than 255 bytes")) {
            try DBusSignature(long)
        }
        #expect(throws: Never.self) { try DBusSignature(String(repeating: "i", count: 255)) }
    }

    @Test func aSingleTypeMustBeExactlyOneCompleteType() throws {
        expectEqual(try DBusSignature.singleType("a{sv}"), .dictionary(key: .string, value: .variant))
        #expect(throws: DBusWireError.self) { try DBusSignature.singleType("ii") }
        #expect(throws: DBusWireError.self) { try DBusSignature.singleType("") }
    }

    @Test func typesKnowTheirAlignment() {
        expectEqual(DBusType.byte.alignment, 1)
        expectEqual(DBusType.int16.alignment, 2)
        expectEqual(DBusType.array(.int64).alignment, 4)
        expectEqual(DBusType.structure([.byte]).alignment, 8)
        expectEqual(DBusType.dictionary(key: .string, value: .variant).alignment, 4)
        expectEqual(DBusType.variant.alignment, 1)
    }
}
