import ContextBusTransport
import ContextBusWire

/// Why a `BusClient` call or connection failed on the client's side (the service's own answers are `RPCError`s).
///
/// Every case names what it was about, e.g. "no service is listening at /run/ctxbus/store.sock".
public enum BusClientError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Nothing listens at the path: no socket file, or a stale one (`ENOENT`, `ECONNREFUSED`).
    case noService(path: String)
    /// The socket or its directory does not let this user in (`EACCES`, `EPERM`).
    case permissionDenied(path: String)
    /// Connecting failed for another reason (the path is not a valid socket address, the backlog stayed full, …).
    case cannotConnect(path: String, reason: String)
    /// The service refused `bus.hello`: `403` (credentials not allowed) or `-32602` (protocol not spoken).
    case rejected(path: String, RPCError)
    /// The connection was lost while the call was waiting for its answer.
    case disconnected(path: String, reason: String)
    /// The client is not connected now (it is reconnecting, or gave up); the call was not sent.
    case notConnected(path: String)
    /// The client was closed.
    case closed(path: String)
    /// No answer came within the call's timeout; the client sent `bus.cancel` for it.
    case timedOut(method: String, after: Duration)
    /// A blocking call was made on the client's own event loop thread, which would have to deliver its answer.
    case wouldBlockEventLoop(method: String)
    /// The request could not be framed (NaN or infinity in its params, or larger than the frame limit).
    case unencodableRequest(method: String, MessageEncodingError)
    /// The service's result does not have the method's result shape.
    case malformedResult(method: String, RPCError)

    public var description: String {
        switch self {
        case .noService(let path):
            return "no service is listening at \(path)"
        case .permissionDenied(let path):
            return "permission denied connecting to \(path)"
        case .cannotConnect(let path, let reason):
            return "cannot connect to \(path): \(reason)"
        case .rejected(let path, let error):
            return "the service at \(path) refused the session: \(error)"
        case .disconnected(let path, let reason):
            return "the connection to \(path) was lost: \(reason)"
        case .notConnected(let path):
            return "not connected to \(path)"
        case .closed(let path):
            return "the client for \(path) has been closed"
        case .timedOut(let method, let after):
            return "\(method) got no answer within \(after)"
        case .wouldBlockEventLoop(let method):
            return "\(method) was called blocking on the bus client's own event loop thread, which delivers its answer"
        case .unencodableRequest(let method, let error):
            return "\(method): \(error)"
        case .malformedResult(let method, let error):
            return "\(method) answered with a result of the wrong shape: \(error.message)"
        }
    }

    /// The error as an `RPCError`, for APIs that carry only those (`BusClient.request`'s signal): connection
    /// problems are `503`, a timeout `408`, a refused session its own error, the rest `-32603`.
    public var rpcError: RPCError {
        switch self {
        case .noService, .permissionDenied, .cannotConnect, .disconnected, .notConnected, .closed:
            return .unavailable(description)
        case .rejected(_, let error):
            return error
        case .timedOut:
            return .timeout(description)
        case .wouldBlockEventLoop, .unencodableRequest, .malformedResult:
            return .internalError(description)
        }
    }

    /// Any error of a call as an `RPCError`: the service's own, a cancellation as `499`, or `rpcError`.
    public static func rpcError(for error: any Error) -> RPCError {
        switch error {
        case let error as RPCError: return error
        case let error as BusClientError: return error.rpcError
        case is CancellationError: return .cancelled()
        default: return .internalError(String(describing: error))
        }
    }

    init(_ error: ConnectError, path: String) {
        switch error {
        case .noSuchSocket, .connectionRefused: self = .noService(path: path)
        case .permissionDenied: self = .permissionDenied(path: path)
        case .listenerBusy, .system: self = .cannotConnect(path: path, reason: error.description)
        }
    }
}
