import TestSupport
import Testing

@testable import ContextBusDBus
@testable import devicesvc

/// Encoding and decoding whole messages against bytes written by libdbus and GDBus (see `DBusReferenceMessages`).
struct DBusMessageWireTests {
    private static func path(_ text: String) -> DBusObjectPath { try! DBusObjectPath(text) }

    static func expectedMethodCall() -> DBusMessage {
        var message = DBusMessage.methodCall(
            destination: "org.example.Service", path: path("/org/example/Thing"), interface: "org.example.Thing",
            member: "Configure")
        message.serial = 1
        message.body = [
            .byte(7), .boolean(true), .int16(-2), .uint16(65000), .int32(-100_000), .uint32(4_000_000_000),
            .int64(-5_000_000_000), .uint64(18_000_000_000_000_000_000), .double(2.5), .string("héllo"),
            .objectPath(path("/a/b_c")), .signature(try! DBusSignature("a{sv}")),
            .array(.int64, []),
            .bytes([1, 2, 3]),
            .dictionary(
                key: .string, value: .variant,
                [
                    DBusDictionaryEntry(.string("Powered"), .variant(.boolean(true))),
                    DBusDictionaryEntry(.string("Alias"), .variant(.string("kitchen"))),
                    DBusDictionaryEntry(.string("Class"), .variant(.uint32(0x1F00))),
                ]),
            .structure([.int32(1), .string("one"), .array(.double, [.double(1.5)])]),
            .dictionary(key: .string, value: .variant, []),
        ]
        return message
    }

    static func expectedSignal() -> DBusMessage {
        var message = DBusMessage.signal(
            path: path("/org/bluez/hci0/dev_AA"), interface: "org.freedesktop.DBus.Properties",
            member: "PropertiesChanged")
        message.serial = 2
        message.flags = .noReplyExpected
        message.sender = ":1.5"
        message.body = [
            .string("org.bluez.Device1"),
            .dictionary(
                key: .string, value: .variant,
                [
                    DBusDictionaryEntry(.string("Connected"), .variant(.boolean(true))),
                    DBusDictionaryEntry(.string("RSSI"), .variant(.int16(-60))),
                ]),
            .strings(["Name"]),
        ]
        return message
    }

    static func expectedNoReplyCall() -> DBusMessage {
        var message = DBusMessage.methodCall(
            destination: ":1.7", path: .root, interface: "org.example.Thing", member: "Fail")
        message.serial = 3
        message.flags = .noReplyExpected
        message.sender = ":1.9"
        return message
    }

    static func expectedReturn() -> DBusMessage {
        var message = DBusMessage.methodReturn(to: expectedNoReplyCall())
        message.serial = 4
        message.flags = .noReplyExpected
        message.body = [.array(.objectPath, [.objectPath(path("/x")), .objectPath(path("/y"))])]
        return message
    }

    static func expectedError() -> DBusMessage {
        var message = DBusMessage.errorReply(
            to: expectedNoReplyCall(), name: "org.bluez.Error.Failed", message: "Operation failed")
        message.serial = 5
        message.flags = .noReplyExpected
        return message
    }

    static let littleEndianCases: [(name: String, bytes: [UInt8], message: DBusMessage)] = [
        (
            "method call with every basic type and containers", DBusReferenceMessages.libdbusMethodCall,
            expectedMethodCall()
        ),
        ("PropertiesChanged signal", DBusReferenceMessages.libdbusPropertiesChangedSignal, expectedSignal()),
        ("call without reply and body", DBusReferenceMessages.libdbusNoReplyCall, expectedNoReplyCall()),
        ("method return", DBusReferenceMessages.libdbusMethodReturn, expectedReturn()),
        ("error reply", DBusReferenceMessages.libdbusErrorReply, expectedError()),
    ]

    @Test(arguments: littleEndianCases.indices)
    func encodesExactlyTheBytesLibdbusWrites(index: Int) throws {
        let fixture = Self.littleEndianCases[index]
        let encoded = try fixture.message.encoded()
        expectEqual(encoded, fixture.bytes, "\(fixture.name)")
    }

    @Test(arguments: littleEndianCases.indices)
    func decodesTheBytesLibdbusWrites(index: Int) throws {
        let fixture = Self.littleEndianCases[index]
        let decoded = try DBusMessage.decode(fixture.bytes)
        expectEqual(decoded, fixture.message, "\(fixture.name)")
    }

    @Test func decodesTheBigEndianMessageGDBusWrites() throws {
        let decoded = try DBusMessage.decode(DBusReferenceMessages.gdbusBigEndianMethodCall)
        expectEqual(decoded.kind, .methodCall)
        expectEqual(decoded.serial, 0x0102_0304)
        expectEqual(decoded.destination, "org.bluez")
        expectEqual(decoded.path, Self.path("/org/bluez/hci0"))
        expectEqual(decoded.interface, "org.bluez.Adapter1")
        expectEqual(decoded.member, "SetDiscoveryFilter")
        expectEqual(decoded.bodySignature, "a{sv}qxas")
        let filter = try #require(decoded.body.first?.dictionaryEntries)
        expectEqual(
            filter,
            [
                DBusDictionaryEntry(.string("Transport"), .variant(.string("le"))),
                DBusDictionaryEntry(.string("RSSI"), .variant(.int16(-70))),
                DBusDictionaryEntry(.string("UUIDs"), .variant(.strings(["180d"]))),
            ])
        expectEqual(Array(decoded.body.dropFirst()), [.uint16(513), .int64(-2), .strings([])])
    }

    @Test func reencodesABigEndianMessageLittleEndianWithTheSameContent() throws {
        let decoded = try DBusMessage.decode(DBusReferenceMessages.gdbusBigEndianMethodCall)
        let encoded = try decoded.encoded()
        expectEqual(encoded[0], UInt8(ascii: "l"))
        try expectEqual(DBusMessage.decode(encoded), decoded)
    }

    @Test func refusesToEncodeAMessageWithoutSerial() {
        var message = Self.expectedNoReplyCall()
        message.serial = 0
        #expect(throws: DBusWireError.invalidHeader("serial is zero")) { try message.encoded() }
    }

    @Test func refusesToEncodeASignalWithoutInterface() {
        var message = Self.expectedSignal()
        message.interface = nil
        #expect(throws: DBusWireError.self) { try message.encoded() }
    }

    @Test func refusesToEncodeAnInvalidMemberName() {
        var message = Self.expectedNoReplyCall()
        message.member = "1Fail"
        #expect(throws: DBusWireError.invalidName("1Fail", kind: "member")) { try message.encoded() }
    }

    @Test func rejectsAHeaderFieldOfTheWrongType() throws {
        // Turn the PATH field's variant signature 'o' into 's' (same wire layout, wrong type for PATH).
        var bytes = DBusReferenceMessages.libdbusNoReplyCall
        expectTrue(bytes[16] == 1 && bytes[18] == UInt8(ascii: "o"))
        bytes[18] = UInt8(ascii: "s")
        #expect(throws: DBusWireError.invalidHeader("header field 1 has type s")) { try DBusMessage.decode(bytes) }
    }

    @Test func rejectsAZeroSerial() {
        var bytes = DBusReferenceMessages.libdbusNoReplyCall
        bytes[8] = 0
        bytes[9] = 0
        bytes[10] = 0
        bytes[11] = 0
        #expect(throws: DBusWireError.invalidHeader("serial is zero")) { try DBusMessage.decode(bytes) }
    }

    @Test func rejectsAnUnsupportedProtocolVersion() {
        var bytes = DBusReferenceMessages.libdbusNoReplyCall
        bytes[3] = 2
        #expect(throws: DBusWireError.unsupportedProtocolVersion(2)) { try DBusMessage.decode(bytes) }
    }

    @Test func rejectsAnInvalidByteOrderMark() {
        var bytes = DBusReferenceMessages.libdbusNoReplyCall
        bytes[0] = UInt8(ascii: "x")
        #expect(throws: DBusWireError.invalidByteOrder(UInt8(ascii: "x"))) { try DBusMessage.decode(bytes) }
    }

    @Test func rejectsABodyShorterThanItsSignatureNeeds() {
        // Declare one byte less of body: the error message's string then lacks its NUL.
        var bytes = DBusReferenceMessages.libdbusErrorReply
        bytes[4] -= 1
        bytes.removeLast()
        #expect(throws: DBusWireError.self) { try DBusMessage.decode(bytes) }
    }

    @Test func rejectsADeclaredLengthAbove128MiB() {
        var bytes = DBusReferenceMessages.libdbusNoReplyCall
        bytes[4] = 0
        bytes[5] = 0
        bytes[6] = 0
        bytes[7] = 0x08  // body length 128 MiB
        #expect(throws: DBusWireError.self) { try DBusMessage.totalLength(ofMessageStartingWith: bytes) }
    }

    @Test func theUnixFDsFieldRoundTrips() throws {
        var message = Self.expectedNoReplyCall()
        message.unixFDCount = 2
        message.body = [.unixFD(1)]
        let decoded = try DBusMessage.decode(try message.encoded())
        expectEqual(decoded.unixFDCount, 2)
        expectEqual(decoded.body, [.unixFD(1)])
    }
}
