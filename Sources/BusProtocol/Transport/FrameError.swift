/// A violation of the framing rule `| len: UInt32 BE | JSON payload |` (`docs/protocol.md`, "Transport and framing").
///
/// A server answers any of these with one `-32600` error whose `id` is `null`, then closes the
/// connection (`RPCError(framing:)` builds that error).
public enum FrameError: Error, Sendable, Hashable {
    /// A header announced a payload of zero bytes.
    case emptyFrame
    /// A header announced more bytes than the receiver accepts (or a payload was too large to send).
    case frameTooLarge(length: Int, limit: Int)
    /// The stream ended inside a frame: `bufferedBytes` bytes were left over, `expectedLength`
    /// is the announced payload length (`nil` when even the 4-byte header was incomplete).
    case truncatedFrame(bufferedBytes: Int, expectedLength: Int?)
}

extension FrameError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .emptyFrame:
            return "framing error: a frame announced an empty payload"
        case .frameTooLarge(let length, let limit):
            return "framing error: a frame of \(length) bytes exceeds the limit of \(limit) bytes"
        case .truncatedFrame(let buffered, let expected?):
            return "framing error: the stream ended \(expected + Frame.headerLength - buffered) bytes short of the "
                + "end of a \(expected)-byte frame"
        case .truncatedFrame(let buffered, nil):
            return "framing error: the stream ended after \(buffered) of a frame header's \(Frame.headerLength) bytes"
        }
    }
}
