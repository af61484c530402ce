import TestSupport
import Testing

@testable import ContextBusDBus
@testable import devicesvc

/// Cutting a byte stream into messages, whatever the read sizes.
struct DBusMessageReaderTests {
    private static let stream =
        DBusReferenceMessages.libdbusMethodCall + DBusReferenceMessages.libdbusPropertiesChangedSignal
        + DBusReferenceMessages.libdbusNoReplyCall + DBusReferenceMessages.libdbusMethodReturn
        + DBusReferenceMessages.libdbusErrorReply

    private static let expected = [
        DBusMessageWireTests.expectedMethodCall(), DBusMessageWireTests.expectedSignal(),
        DBusMessageWireTests.expectedNoReplyCall(), DBusMessageWireTests.expectedReturn(),
        DBusMessageWireTests.expectedError(),
    ]

    @Test(arguments: [1, 7, 16, 100, 4096])
    func readsMessagesSplitAcrossReadsOfAnySize(chunkSize: Int) throws {
        var reader = DBusMessageReader()
        var messages: [DBusMessage] = []
        var offset = 0
        while offset < Self.stream.count {
            reader.append(Self.stream[offset..<min(offset + chunkSize, Self.stream.count)])
            offset += chunkSize
            while let message = try reader.nextMessage() { messages.append(message) }
        }
        expectEqual(messages, Self.expected)
        expectEqual(reader.bufferedByteCount, 0)
    }

    @Test func aPartialHeaderYieldsNothingYet() throws {
        var reader = DBusMessageReader()
        reader.append(DBusReferenceMessages.libdbusNoReplyCall.prefix(15))
        expectNil(try reader.nextMessage())
        reader.append(DBusReferenceMessages.libdbusNoReplyCall.dropFirst(15).dropLast())
        expectNil(try reader.nextMessage())
        reader.append(DBusReferenceMessages.libdbusNoReplyCall.suffix(1))
        try expectEqual(reader.nextMessage(), DBusMessageWireTests.expectedNoReplyCall())
    }

    @Test func skipsAMessageOfUnknownType() throws {
        var unknown = DBusReferenceMessages.libdbusNoReplyCall
        unknown[1] = 9
        var reader = DBusMessageReader()
        reader.append(unknown + DBusReferenceMessages.libdbusErrorReply)
        try expectEqual(reader.nextMessage(), DBusMessageWireTests.expectedError())
        expectNil(try reader.nextMessage())
    }

    @Test func anOversizeLengthThrowsWithoutWaitingForTheData() {
        var header = Array(DBusReferenceMessages.libdbusNoReplyCall.prefix(16))
        header[7] = 0x10  // body length 256 MiB
        var reader = DBusMessageReader()
        reader.append(header)
        #expect(throws: DBusWireError.messageTooLarge(length: 268_435_568, limit: 134_217_728)) {
            try reader.nextMessage()
        }
    }

    @Test func anInvalidByteOrderThrows() {
        var reader = DBusMessageReader()
        reader.append([UInt8(ascii: "X")] + Array(repeating: 0, count: 15))
        #expect(throws: DBusWireError.invalidByteOrder(UInt8(ascii: "X"))) { try reader.nextMessage() }
    }
}
