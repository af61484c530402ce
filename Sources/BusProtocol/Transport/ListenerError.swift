/// Why `UnixListener.listen(on:group:options:onAccept:)` refused to start.
package enum ListenerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Something answers on the socket path: another instance is running.
    case addressInUse(path: String)
    /// The path exists and is not a socket; it was left untouched.
    case pathOccupied(path: String, kind: String)
    /// A component of the socket's directory exists and is not a directory.
    case parentNotDirectory(path: String)
    /// `LISTEN_FDS`/`LISTEN_PID` name this process, but the descriptor is not a listening Unix stream socket.
    case activationDescriptorInvalid(descriptor: Int32)
    /// A system call failed.
    case system(SystemError)

    package var description: String {
        switch self {
        case .addressInUse(let path):
            return "another process is listening on \(path); refusing to start"
        case .pathOccupied(let path, let kind):
            return "\(path) exists and is \(kind), not a socket; leaving it untouched"
        case .parentNotDirectory(let path):
            return "\(path) is not a directory, so the socket cannot be created in it"
        case .activationDescriptorInvalid(let descriptor):
            return "socket activation passed descriptor \(descriptor), which is not a listening Unix stream socket"
        case .system(let error):
            return error.description
        }
    }
}
