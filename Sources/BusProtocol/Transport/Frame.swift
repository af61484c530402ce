import ContextBusSupport

/// The framing of the wire protocol: each message is a 4-byte big-endian length, then that many
/// bytes of UTF-8 JSON holding one JSON object.
///
/// ```
/// +--------+--------+--------+--------+------------------------------+
/// |      len: UInt32, big-endian      |  len bytes of JSON payload   |
/// +--------+--------+--------+--------+------------------------------+
///  byte 0                     byte 3   byte 4 ...          byte 3+len
/// ```
///
/// `len` is at least 1 and at most the receiver's maximum (16 MiB unless configured).
public enum Frame {
    /// The size of the length prefix.
    public static let headerLength = 4
    /// The default largest payload, 16 MiB (`--max-frame`).
    public static let defaultMaximumLength = 16 * 1024 * 1024
    /// The largest payload the 32-bit length prefix can describe.
    public static let largestEncodableLength = Int(UInt32.max)

    /// A frame holding `payload`, without a size limit beyond what the header can describe.
    ///
    /// - Precondition: `payload` is not empty and fits a 32-bit length; use `FrameEncoder` to get
    ///   these as errors instead.
    public static func encode<Payload: Collection<UInt8>>(payload: Payload) -> [UInt8] {
        do {
            return try FrameEncoder(maximumLength: largestEncodableLength).encode(payload: payload)
        } catch {
            preconditionFailure("cannot frame this payload: \(error)")
        }
    }

    /// Writes the big-endian `length` into the four bytes of `frame` starting at `offset`.
    static func storeLength(_ length: Int, in frame: inout [UInt8], at offset: Int) {
        let value = UInt32(length)
        frame[offset] = UInt8(truncatingIfNeeded: value >> 24)
        frame[offset + 1] = UInt8(truncatingIfNeeded: value >> 16)
        frame[offset + 2] = UInt8(truncatingIfNeeded: value >> 8)
        frame[offset + 3] = UInt8(truncatingIfNeeded: value)
    }
}

/// Builds frames, refusing payloads that are empty or larger than `maximumLength`.
///
/// ```swift
/// let bytes = try FrameEncoder().encode(.object(["jsonrpc": "2.0", "method": "bus.ping", "id": 1]))
/// ```
public struct FrameEncoder: Sendable {
    /// The largest payload this encoder produces; larger ones are `FrameError.frameTooLarge`.
    public var maximumLength: Int

    public init(maximumLength: Int = Frame.defaultMaximumLength) {
        self.maximumLength = min(maximumLength, Frame.largestEncodableLength)
    }

    /// A frame holding `payload` (the JSON text is not checked).
    ///
    /// - Throws: `FrameError.emptyFrame` or `.frameTooLarge(length:limit:)`.
    public func encode<Payload: Collection<UInt8>>(payload: Payload) throws(FrameError) -> [UInt8] {
        let length = payload.count
        try check(length)
        var frame = [UInt8](repeating: 0, count: Frame.headerLength)
        frame.reserveCapacity(Frame.headerLength + length)
        Frame.storeLength(length, in: &frame, at: 0)
        frame.append(contentsOf: payload)
        return frame
    }

    /// A frame holding the JSON text of `value`.
    ///
    /// - Throws: `MessageEncodingError` when `value` holds NaN or infinity or its text does not fit a frame.
    public func encode(_ value: JSONValue, writer: JSONWriter = JSONWriter()) throws(MessageEncodingError) -> [UInt8] {
        try encode { (output: inout [UInt8]) throws(JSONWriteError) in try writer.write(value, into: &output) }
    }

    /// A frame whose payload `writePayload` appends to the buffer it is given, with no intermediate copy.
    ///
    /// - Throws: `MessageEncodingError` when writing fails or the payload does not fit a frame.
    public func encode(
        writingPayload writePayload: (inout [UInt8]) throws(JSONWriteError) -> Void
    )
        throws(MessageEncodingError) -> [UInt8]
    {
        var frame = [UInt8](repeating: 0, count: Frame.headerLength)
        frame.reserveCapacity(256)
        do {
            try writePayload(&frame)
        } catch {
            throw .json(error)
        }
        let length = frame.count - Frame.headerLength
        do {
            try check(length)
        } catch {
            throw .frame(error)
        }
        Frame.storeLength(length, in: &frame, at: 0)
        return frame
    }

    private func check(_ length: Int) throws(FrameError) {
        guard length > 0 else { throw .emptyFrame }
        guard length <= maximumLength else { throw .frameTooLarge(length: length, limit: maximumLength) }
    }
}

/// Why a message could not be turned into a frame.
public enum MessageEncodingError: Error, Sendable, Hashable {
    /// The message holds a value JSON cannot express (NaN or infinity).
    case json(JSONWriteError)
    /// The payload is empty or larger than the encoder's limit.
    case frame(FrameError)
}

extension MessageEncodingError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .json(let error): return "cannot encode message: \(error)"
        case .frame(let error): return "cannot encode message: \(error)"
        }
    }
}
