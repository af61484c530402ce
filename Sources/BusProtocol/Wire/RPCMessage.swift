import ContextBusSupport
import ContextBusTransport

/// A JSON-RPC 2.0 message that can write itself: `RPCRequest`, `RPCResponse`, `RPCEvent`.
///
/// The envelope (`jsonrpc`, `id`, `method`, `result`, `error`) is written directly with its member
/// names as fixed bytes, in the order `jsonrpc`, `id`, `method`, `params`/`result`/`error`; only
/// the payload goes through `JSONWriter`. No Foundation coder is involved.
package protocol RPCMessage: Sendable {
    /// Appends the message's JSON text to `output`.
    ///
    /// - Throws: `JSONWriteError` when the payload holds NaN or infinity.
    func write(into output: inout [UInt8], writer: JSONWriter) throws(JSONWriteError)

    /// The message as a `JSONValue` (for tests and logging; the wire path uses `write`).
    var json: JSONValue { get }
}

extension RPCMessage {
    /// The message as one frame, ready to send.
    ///
    /// - Throws: `MessageEncodingError` for NaN or infinity in the payload or a payload larger
    ///   than `encoder.maximumLength`.
    package func encodeFrame(
        encoder: FrameEncoder = FrameEncoder(), writer: JSONWriter = JSONWriter()
    )
        throws(MessageEncodingError) -> [UInt8]
    {
        try encoder.encode { (output: inout [UInt8]) throws(JSONWriteError) in
            try write(into: &output, writer: writer)
        }
    }

    /// The message's JSON text, without a frame header.
    ///
    /// - Throws: `JSONWriteError` for NaN or infinity in the payload.
    package func jsonBytes(writer: JSONWriter = JSONWriter()) throws(JSONWriteError) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(128)
        try write(into: &output, writer: writer)
        return output
    }
}
