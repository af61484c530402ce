import TestSupport
import Testing

@testable import ContextBusDBus
@testable import devicesvc

struct DBusValueTests {
    @Test func typedAccessorsLookThroughVariants() {
        expectEqual(DBusValue.variant(.boolean(true)).boolValue, true)
        expectEqual(DBusValue.variant(.variant(.int16(-3))).int16Value, -3)
        expectNil(DBusValue.string("x").int32Value)
        expectEqual(DBusValue.bytes([1, 2]).bytesValue, [1, 2])
        expectNil(DBusValue.strings(["a"]).bytesValue)
    }

    @Test func aPropertyMapIsSortedAndReadsBackWithoutVariants() {
        let map = DBusValue.propertyMap(["b": .uint32(2), "a": .string("x")])
        expectEqual(map.type.signature, "a{sv}")
        expectEqual(map.dictionaryEntries?.map(\.key), [.string("a"), .string("b")])
        expectEqual(map.propertyMapValue, ["a": .string("x"), "b": .uint32(2)])
    }

    @Test func anEmptyArrayKeepsItsElementType() {
        expectEqual(DBusValue.array(.structure([.int32, .string]), []).type.signature, "a(is)")
        expectEqual(DBusValue.dictionary(key: .objectPath, value: .variant, []).type.signature, "a{ov}")
    }

    @Test func describesValuesReadably() {
        let value = DBusValue.structure([.string("a"), .variant(.uint32(1)), .strings(["b"])])
        expectEqual(value.description, "(\"a\", <1>, [\"b\"])")
    }

    /// Found by the `dbus` fuzz target: a message carrying a NaN decoded unequal to itself
    /// re-encoded, because IEEE `==` says NaN != NaN. Values compare as they are on the wire.
    @Test func aMessageCarryingNaNDecodesEqualToItselfReencoded() throws {
        var call = DBusMessage.signal(
            path: try DBusObjectPath("/a"), interface: "org.example.Thing", member: "Changed",
            body: [.double(.nan), .structure([.double(-.nan), .variant(.double(.infinity))])])
        call.serial = 1
        let decoded = try DBusMessage.decode(try call.encoded())
        expectEqual(decoded, call)
        try expectEqual(DBusMessage.decode(try decoded.encoded()), decoded)
    }

    @Test func doublesCompareByTheirBitsAndHashConsistently() {
        expectEqual(DBusValue.double(.nan), .double(.nan))
        expectNotEqual(DBusValue.double(0.0), .double(-0.0))
        expectEqual(DBusValue.double(1.5), .double(1.5))
        expectEqual(Set([DBusValue.double(.nan), .double(.nan)]).count, 1)
        expectNotEqual(DBusValue.int32(1), .uint32(1))
        expectNotEqual(DBusValue.array(.int32, []), .array(.uint32, []))
    }
}
