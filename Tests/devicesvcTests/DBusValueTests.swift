import Testing

@testable import devicesvc

@Suite struct DBusValueTests {
    @Test func typedAccessorsLookThroughVariants() {
        #expect(DBusValue.variant(.boolean(true)).boolValue == true)
        #expect(DBusValue.variant(.variant(.int16(-3))).int16Value == -3)
        #expect(DBusValue.string("x").int32Value == nil)
        #expect(DBusValue.bytes([1, 2]).bytesValue == [1, 2])
        #expect(DBusValue.strings(["a"]).bytesValue == nil)
    }

    @Test func aPropertyMapIsSortedAndReadsBackWithoutVariants() {
        let map = DBusValue.propertyMap(["b": .uint32(2), "a": .string("x")])
        #expect(map.type.signature == "a{sv}")
        #expect(map.dictionaryEntries?.map(\.key) == [.string("a"), .string("b")])
        #expect(map.propertyMapValue == ["a": .string("x"), "b": .uint32(2)])
    }

    @Test func anEmptyArrayKeepsItsElementType() {
        #expect(DBusValue.array(.structure([.int32, .string]), []).type.signature == "a(is)")
        #expect(DBusValue.dictionary(key: .objectPath, value: .variant, []).type.signature == "a{ov}")
    }

    @Test func describesValuesReadably() {
        let value = DBusValue.structure([.string("a"), .variant(.uint32(1)), .strings(["b"])])
        #expect(value.description == "(\"a\", <1>, [\"b\"])")
    }
}
