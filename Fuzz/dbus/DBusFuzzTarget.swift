@testable import ContextBusDBus

// Fuzz target `dbus`: the D-Bus unmarshaller of devicesvc (ContextBusDBus, Sources/devicesvc/DBus), imported
// @testable because its types are internal.
//
// Properties:
// - `DBusMessage.decode` never crashes on any bytes, with the byte-order mark forced to
//   little-endian (`l`) and to big-endian (`B`);
// - a decoded message's `encoded()` bytes (always little-endian) decode to an equal message,
//   whose encoding is the same bytes again; `totalLength` of those bytes is their length;
// - `DBusMessageReader` fed the input in random reads returns the messages (and the error)
//   that decoding the stream message by message gives.

@_cdecl("LLVMFuzzerTestOneInput")
public func dbusFuzzTarget(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzBytes(data, size)
    guard !input.isEmpty else { return 0 }
    for mark in [UInt8(ascii: "l"), UInt8(ascii: "B")] {
        var bytes = input
        bytes[0] = mark
        checkDecoding(bytes)
    }
    checkReader(input)
    return 0
}

private func checkDecoding(_ bytes: [UInt8]) {
    let message: DBusMessage
    do {
        message = try DBusMessage.decode(bytes)
    } catch {
        _ = error.description
        return
    }
    do {
        let encoded = try message.encoded()
        fuzzCheck(
            try DBusMessage.totalLength(ofMessageStartingWith: encoded) == encoded.count,
            "totalLength disagrees with an encoded message's length")
        let again = try DBusMessage.decode(encoded)
        fuzzCheck(again == message, "\(message) re-encoded decodes as \(again)")
        fuzzCheck(try again.encoded() == encoded, "encoding \(message) is not stable")
    } catch {
        fuzzCheck(false, "a decoded message does not survive re-encoding: \(error) for \(message)")
    }
}

/// What the stream holds, decoded one message at a time without a reader.
private func decodeOneByOne(_ stream: [UInt8]) -> (messages: [DBusMessage], error: DBusWireError?) {
    var messages: [DBusMessage] = []
    var offset = 0
    while true {
        do {
            let rest = stream[offset...]
            guard let total = try DBusMessage.totalLength(ofMessageStartingWith: rest), rest.count >= total else {
                return (messages, nil)
            }
            let bytes = Array(stream[offset..<offset + total])
            offset += total
            do {
                messages.append(try DBusMessage.decode(bytes))
            } catch .unknownMessageType {
                continue
            }
        } catch {
            return (messages, error)
        }
    }
}

private func checkReader(_ stream: [UInt8]) {
    let expected = decodeOneByOne(stream)
    var random = FuzzRandom(hashing: stream)
    var reader = DBusMessageReader()
    var messages: [DBusMessage] = []
    var failure: DBusWireError?
    var appended = 0
    reading: while appended < stream.count {
        let remaining = stream.count - appended
        let length = random.below(8) == 0 ? random.below(remaining + 1) : min(remaining, random.below(16))
        reader.append(stream[appended..<appended + length])
        appended += length
        do {
            while let message = try reader.nextMessage() { messages.append(message) }
        } catch {
            failure = error
            break reading
        }
    }
    fuzzCheck(
        messages == expected.messages,
        "the reader returned \(messages.count) messages, expected \(expected.messages.count)")
    fuzzCheck(
        failure == expected.error,
        "the reader failed with \(String(describing: failure)), expected \(String(describing: expected.error))")
}
