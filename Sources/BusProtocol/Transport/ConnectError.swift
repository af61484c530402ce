/// Why `SocketConnection.connect(to:on:options:timeout:)` failed, naming the socket path.
package enum ConnectError: Error, Hashable, Sendable, CustomStringConvertible {
    /// There is no socket file at the path (`ENOENT`): the service is not running, or the path is wrong.
    case noSuchSocket(path: String)
    /// The socket file exists but nothing listens on it (`ECONNREFUSED`): a stale socket of a dead service.
    case connectionRefused(path: String)
    /// The socket file or its directory does not let this user in (`EACCES`/`EPERM`).
    case permissionDenied(path: String)
    /// The listener's backlog stayed full until the timeout (`EAGAIN`).
    case listenerBusy(path: String)
    /// Any other failure.
    case system(SystemError)

    package var description: String {
        switch self {
        case .noSuchSocket(let path): return "no socket at \(path): is the service running?"
        case .connectionRefused(let path): return "nothing listens on \(path) (connection refused)"
        case .permissionDenied(let path): return "permission denied connecting to \(path)"
        case .listenerBusy(let path): return "the listener at \(path) is not accepting connections (backlog full)"
        case .system(let error): return error.description
        }
    }
}
