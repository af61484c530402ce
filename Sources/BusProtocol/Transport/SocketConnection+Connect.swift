// The client side: connecting a `SocketConnection` to a listening socket path.

extension SocketConnection {
    /// Connects to the Unix-domain socket at `address`, for `loop` to serve.
    ///
    /// A Unix-domain connect completes at once or fails; it only has to be retried while the listener's backlog is
    /// full (`EAGAIN`). Off the loop threads that is retried with short pauses until `timeout`; on a loop thread, where
    /// blocking would stall every connection of the loop, it fails at once with `.listenerBusy`.
    ///
    /// - Parameters:
    ///   - address: The socket path.
    ///   - loop: The loop that will serve the connection; call `start(_:)` on the result to begin reading.
    ///   - options: Limits of the connection.
    ///   - timeout: How long to keep retrying a full backlog.
    /// - Returns: The connected, not yet started connection.
    /// - Throws: `ConnectError`, naming the path.
    package static func connect(
        to address: UnixSocketAddress, on loop: EventLoop, options: Options = Options(),
        timeout: Duration = .seconds(5)
    ) throws(ConnectError) -> SocketConnection {
        let descriptor: FileDescriptor
        do {
            descriptor = try Syscall.makeStreamSocket()
        } catch {
            throw .system(error)
        }
        let deadline = ContinuousClock.now + timeout
        var pause = 1
        while true {
            do {
                try Syscall.connect(descriptor.rawValue, to: address)
                return SocketConnection(adopting: descriptor, on: loop, options: options)
            } catch {
                let failure = ConnectError(error, path: address.path)
                guard failure == .listenerBusy(path: address.path), !loop.inEventLoop, ContinuousClock.now < deadline
                else { throw failure }
                Syscall.sleep(milliseconds: pause)
                pause = min(pause * 2, 50)
            }
        }
    }
}

extension ConnectError {
    /// Maps a failed `connect(2)` to the case that explains it.
    init(_ error: SystemError, path: String) {
        switch error.errno {
        case SystemError.noSuchFile: self = .noSuchSocket(path: path)
        case SystemError.connectionRefused: self = .connectionRefused(path: path)
        case SystemError.accessDenied, SystemError.notPermitted: self = .permissionDenied(path: path)
        case _ where error.isWouldBlock: self = .listenerBusy(path: path)
        default: self = .system(error)
        }
    }
}
