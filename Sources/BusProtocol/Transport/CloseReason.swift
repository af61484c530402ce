/// Why a `SocketConnection` closed; passed once to its `onClose` handler.
package enum CloseReason: Hashable, Sendable, CustomStringConvertible {
    /// The peer closed the connection (read returned end of file).
    case endOfFile
    /// A read or write failed, e.g. `ECONNRESET`, or `EPIPE` when the peer went away while we were writing.
    case error(SystemError)
    /// This side called `close()` or `closeAfterFlushing(_:timeout:)`.
    case localClose
    /// The connection's event loop shut down.
    case loopShutdown

    package var description: String {
        switch self {
        case .endOfFile: return "closed by the peer"
        case .error(let error): return "closed after an error: \(error)"
        case .localClose: return "closed locally"
        case .loopShutdown: return "closed because the event loop shut down"
        }
    }
}

/// A write refused because it would have grown the outbound queue past its limit.
///
/// The owner is expected to tell the peer (`bus.overflow`, best effort with `closeAfterFlushing`) and close.
package struct OutboundOverflow: Hashable, Sendable, CustomStringConvertible {
    /// Bytes waiting in the queue when the write was refused.
    package var queuedBytes: Int
    /// Size of the refused write.
    package var refusedBytes: Int
    /// The connection's `maxOutboundBytes`.
    package var limit: Int

    package var description: String {
        "outbound queue full: \(queuedBytes) bytes queued, a write of \(refusedBytes) would pass the limit of \(limit)"
    }
}
