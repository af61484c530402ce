import ContextBusSupport
import Dispatch

/// A listening Unix-domain stream socket that accepts on an event loop and hands each connection to a loop of its
/// group, round-robin.
///
/// Socket path rules (docs/protocol.md, "Transport and framing"):
/// - a missing directory is created with `Options.directoryMode` (0700); an existing one is left as it is;
/// - the socket file gets `Options.socketMode` (0660) with `chmod` between `bind` and `listen`, before anyone can
///   connect;
/// - an existing socket file is probed: if something answers, `ListenerError.addressInUse`; if the connection is
///   refused (a dead process's socket), it is removed and replaced;
/// - anything at the path that is not a socket is an error and is never deleted;
/// - `close()` removes the socket file, if it is still the one this listener created.
///
/// Under systemd socket activation (`LISTEN_PID`/`LISTEN_FDS` naming this process) the inherited descriptor 3 is
/// used instead, and the file, which systemd owns, is neither created nor removed.
package final class UnixListener: Sendable, CustomStringConvertible {
    /// How the socket is created and served.
    package struct Options: Sendable {
        /// Mode of the socket file (default 0660: owner and group may connect).
        package var socketMode: UInt32
        /// Mode of directories created for the socket (default 0700).
        package var directoryMode: UInt32
        /// The `listen(2)` backlog.
        package var backlog: Int32
        /// Options for each accepted connection.
        package var connectionOptions: SocketConnection.Options
        /// Where to look for an inherited socket; `nil` always binds.
        package var socketActivation: SocketActivation?
        /// Connections accepted per readiness event before the loop serves others.
        package var maxAcceptsPerWakeup: Int

        package init(
            socketMode: UInt32 = 0o660, directoryMode: UInt32 = 0o700, backlog: Int32 = 1024,
            connectionOptions: SocketConnection.Options = .init(),
            socketActivation: SocketActivation? = .processEnvironment, maxAcceptsPerWakeup: Int = 64
        ) {
            self.socketMode = socketMode
            self.directoryMode = directoryMode
            self.backlog = backlog
            self.connectionOptions = connectionOptions
            self.socketActivation = socketActivation
            self.maxAcceptsPerWakeup = maxAcceptsPerWakeup
        }
    }

    /// The socket path.
    package let address: UnixSocketAddress
    /// Whether the socket was inherited from systemd rather than bound here.
    package let isSocketActivated: Bool
    /// The loop that accepts.
    package let loop: EventLoop
    private let group: EventLoopGroup
    private let descriptor: FileDescriptor
    private let options: Options
    private let onAccept: @Sendable (SocketConnection) -> Void
    /// The socket file this listener created, to remove only that one on close.
    private let boundFile: Syscall.FileIdentity?
    private let state = Locked(State())

    private struct State {
        var registration: IORegistration?
        var isClosed = false
    }

    /// Binds (or inherits) the socket at `address` and starts accepting.
    ///
    /// - Parameters:
    ///   - address: The socket path.
    ///   - group: The listener accepts on `group.next()` and gives each connection the next loop in turn.
    ///   - options: Modes, backlog, connection limits, socket activation.
    ///   - onAccept: Called on the connection's own loop with each new connection, which it must `start(_:)`
    ///     (or close).
    /// - Returns: The listening listener.
    /// - Throws: `ListenerError`.
    package static func listen(
        on address: UnixSocketAddress, group: EventLoopGroup, options: Options = Options(),
        onAccept: @escaping @Sendable (SocketConnection) -> Void
    ) throws(ListenerError) -> UnixListener {
        let loop = group.next()
        if let inherited = try options.socketActivation?.takeListener() {
            return try UnixListener(
                address: address, group: group, loop: loop, descriptor: inherited, isSocketActivated: true,
                boundFile: nil, options: options, onAccept: onAccept)
        }
        try prepareSocketPath(address, directoryMode: options.directoryMode)
        let descriptor: FileDescriptor
        do {
            descriptor = try Syscall.makeStreamSocket()
        } catch {
            throw .system(error)
        }
        do {
            try Syscall.bind(descriptor.rawValue, to: address)
        } catch  where error.errno == SystemError.addressInUse {
            throw .addressInUse(path: address.path)  // another process bound it since the check
        } catch {
            throw .system(error)
        }
        let boundFile = Syscall.fileIdentity(atPath: address.path)
        do {
            // No one can connect before listen(), so the mode is right before the socket can be used.
            try Syscall.changeMode(atPath: address.path, to: options.socketMode)
            try Syscall.listen(descriptor.rawValue, backlog: options.backlog)
        } catch {
            removeSocketFile(address.path, ifStill: boundFile)
            throw .system(error)
        }
        do {
            return try UnixListener(
                address: address, group: group, loop: loop, descriptor: descriptor, isSocketActivated: false,
                boundFile: boundFile, options: options, onAccept: onAccept)
        } catch {
            removeSocketFile(address.path, ifStill: boundFile)
            throw error
        }
    }

    private init(
        address: UnixSocketAddress, group: EventLoopGroup, loop: EventLoop, descriptor: FileDescriptor,
        isSocketActivated: Bool, boundFile: Syscall.FileIdentity?, options: Options,
        onAccept: @escaping @Sendable (SocketConnection) -> Void
    ) throws(ListenerError) {
        self.address = address
        self.group = group
        self.loop = loop
        self.descriptor = descriptor
        self.boundFile = boundFile
        self.isSocketActivated = isSocketActivated
        self.options = options
        self.onAccept = onAccept
        do {
            let registration = try loop.register(
                descriptor, for: .readable,
                onReady: { [self] _ in acceptPending() },
                onLoopShutdown: { [self] in tearDown() })
            state.withLock { $0.registration = registration }
        } catch let error as SystemError {
            throw .system(error)
        } catch {
            throw .system(.closedDescriptor("register listener on a shut-down loop"))
        }
    }

    package var description: String { "UnixListener(\(address.path))" }

    /// Stops accepting, closes the socket and removes the socket file (unless systemd owns it). Idempotent and
    /// callable from any thread; when it returns the file is gone. Accepted connections stay open.
    package func close() {
        if loop.inEventLoop {
            tearDown()
            return
        }
        let done = DispatchSemaphore(value: 0)
        if loop.submit({ [self] in
            tearDown()
            done.signal()
        }) {
            done.wait()
        } else {
            tearDown()  // the loop has stopped: nothing else uses the descriptor
        }
    }

    private func tearDown() {
        let registration = state.withLock { state -> IORegistration?? in
            guard !state.isClosed else { return .none }
            state.isClosed = true
            defer { state.registration = nil }
            return .some(state.registration)
        }
        guard let registration else { return }
        registration?.cancel()
        descriptor.close()
        if let boundFile { Self.removeSocketFile(address.path, ifStill: boundFile) }
    }

    private static func removeSocketFile(_ path: String, ifStill identity: Syscall.FileIdentity?) {
        guard let identity, Syscall.fileIdentity(atPath: path) == identity else { return }
        try? Syscall.removeFile(atPath: path)
    }

    // MARK: - Accepting

    private func acceptPending() {
        for _ in 0..<options.maxAcceptsPerWakeup {
            let accepted: FileDescriptor?
            do {
                accepted = try Syscall.accept(descriptor.rawValue)
            } catch  where SystemError.tooManyOpenFiles.contains(error.errno) {
                pauseAccepting()
                return
            } catch {
                continue  // ECONNABORTED and the like concern one connection, not the listener
            }
            guard let accepted else { return }
            let target = group.next()
            let connection = SocketConnection(adopting: accepted, on: target, options: options.connectionOptions)
            if target === loop {
                onAccept(connection)
            } else {
                let onAccept = onAccept
                target.execute { onAccept(connection) }
            }
        }
    }

    /// Out of descriptors: stop watching for 100 ms rather than spin on a level-triggered readiness that accept
    /// cannot consume.
    private func pauseAccepting() {
        guard let registration = state.withLock({ $0.registration }) else { return }
        try? registration.setInterest([])
        loop.schedule(after: .milliseconds(100)) { [self] in
            guard let registration = state.withLock({ $0.registration }) else { return }
            try? registration.setInterest(.readable)
        }
    }
}
