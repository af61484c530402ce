/// Splits a byte stream into frame payloads, however the stream was cut into reads.
///
/// Feed every read to `append(_:)`, then call `nextFrame()` until it returns `nil`. A header's
/// length is checked as soon as its four bytes are in: a zero length is `FrameError.emptyFrame`,
/// one above `maximumLength` `FrameError.frameTooLarge` (without waiting for, or buffering, the
/// announced body). After an error the decoder is failed for good: every later `nextFrame()`
/// throws the same error and appended bytes are dropped, because after a framing error the
/// stream has no trustworthy message boundaries (`docs/protocol.md`: "nothing else from that
/// connection is processed"). At end of stream, `finish()` reports a frame cut short.
///
/// ```
/// read 1: | 00 00 00 0d | {"jsonrpc":  |
/// read 2: "2.0"} | 00 00 |           -> nextFrame() = {"jsonrpc":"2.0"}, then nil
/// read 3: 00 02 | {} |               -> nextFrame() = {}, then nil
/// ```
public struct FrameDecoder: Sendable {
    /// The largest payload accepted.
    public let maximumLength: Int
    /// The error that failed the decoder, if one has.
    public private(set) var failure: FrameError?

    private var buffer: [UInt8] = []
    /// Where the unread bytes of `buffer` start.
    private var readIndex = 0

    public init(maximumLength: Int = Frame.defaultMaximumLength) {
        self.maximumLength = maximumLength
    }

    /// How many received bytes are not part of a returned frame yet.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// Adds bytes read from the stream (ignored once the decoder has failed).
    public mutating func append<Bytes: Sequence<UInt8>>(_ bytes: Bytes) {
        guard failure == nil else { return }
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// Adds bytes read from the stream straight from a read buffer.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        append(bytes.assumingMemoryBound(to: UInt8.self))
    }

    /// The next complete payload, or `nil` when more bytes are needed.
    ///
    /// - Throws: `FrameError.emptyFrame` or `.frameTooLarge(length:limit:)`, now and on every later call.
    public mutating func nextFrame() throws(FrameError) -> [UInt8]? {
        if let failure { throw failure }
        guard bufferedByteCount >= Frame.headerLength else { return nil }
        let length = announcedLength(at: readIndex)
        if length == 0 { throw fail(.emptyFrame) }
        if length > maximumLength { throw fail(.frameTooLarge(length: length, limit: maximumLength)) }
        let start = readIndex + Frame.headerLength
        guard buffer.count - start >= length else { return nil }
        let payload = Array(buffer[start..<(start + length)])
        readIndex = start + length
        if readIndex == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= Self.retainedCapacity)
            readIndex = 0
        }
        return payload
    }

    /// Declares the end of the stream.
    ///
    /// - Throws: `FrameError.truncatedFrame(bufferedBytes:expectedLength:)` when the stream ended inside a
    ///   frame (the peer closed mid-frame), or the error that already failed the decoder.
    public func finish() throws(FrameError) {
        if let failure { throw failure }
        let leftover = bufferedByteCount
        guard leftover > 0 else { return }
        let expected = leftover >= Frame.headerLength ? announcedLength(at: readIndex) : nil
        throw .truncatedFrame(bufferedBytes: leftover, expectedLength: expected)
    }

    // MARK: - Buffer

    /// A drained buffer keeps its storage up to this size, so steady traffic does not reallocate.
    private static let retainedCapacity = 64 * 1024

    private func announcedLength(at offset: Int) -> Int {
        Int(buffer[offset]) << 24 | Int(buffer[offset + 1]) << 16 | Int(buffer[offset + 2]) << 8
            | Int(buffer[offset + 3])
    }

    private mutating func fail(_ error: FrameError) -> FrameError {
        failure = error
        buffer = []
        readIndex = 0
        return error
    }

    /// Drops consumed bytes before appending, once they are at least half the buffer.
    private mutating func compact() {
        guard readIndex > 0, readIndex >= buffer.count / 2 else { return }
        buffer.removeSubrange(0..<readIndex)
        readIndex = 0
    }
}
