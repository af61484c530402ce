/// Cuts a byte stream, arriving in reads of any size, into whole D-Bus messages.
///
/// Feed it every read with `append(_:)`, then take messages with `nextMessage()` until it returns `nil`. A message
/// of an unknown type is skipped, as the specification demands. Any other malformed message throws; after that the
/// stream has lost its framing and the connection must be closed.
///
/// ```swift
/// reader.append(chunk)
/// while let message = try reader.nextMessage() { handle(message) }
/// ```
package struct DBusMessageReader {
    private var buffer: [UInt8] = []
    private var start = 0

    package init() {}

    /// The number of bytes received but not yet consumed as messages.
    package var bufferedByteCount: Int { buffer.count - start }

    /// Adds received bytes.
    package mutating func append(_ bytes: some Sequence<UInt8>) {
        if start > 0 && start >= buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// Takes the next whole message, or returns `nil` when more bytes are needed.
    ///
    /// - Throws: `DBusWireError` when the stream holds a malformed message.
    package mutating func nextMessage() throws(DBusWireError) -> DBusMessage? {
        while true {
            let available = buffer[start...]
            guard let total = try DBusMessage.totalLength(ofMessageStartingWith: available),
                available.count >= total
            else { return nil }
            let bytes = Array(buffer[start..<(start + total)])
            start += total
            do {
                return try DBusMessage.decode(bytes)
            } catch .unknownMessageType {
                continue
            }
        }
    }
}
