import ContextBusSupport
import ContextBusTransport
import Dispatch

/// A JSON-RPC service on a Unix-domain socket, speaking docs/protocol.md's session rules: the generic half of
/// `storesvc` and `devicesvc`.
///
/// The server owns the listener and the session layer (framing, the access check, `bus.hello`, `bus.ping`,
/// `bus.cancel`, the in-flight limit, overflow); a service registers one handler per method. Handlers never
/// run on an event loop: async handlers run as tasks, responder handlers on the handler queue (where they may
/// block), and either can answer later.
///
/// ```swift
/// let server = BusServer(configuration: .init(name: "storesvc", version: "0.1.0", socketPath: path))
/// server.register(StoreFetch.self) { request, params in
///     try await reader.fetch(params)                       // an RPCError thrown here is the answer
/// }
/// server.register(StoreSave.self, ordering: .inOrder, cancellation: .cooperative) { request, params, responder in
///     root.enqueue(params, author: request.connection.clientName) { responder.respond(with: $0) }
/// }
/// try server.start()
/// …
/// await server.shutdown(gracefully: true)
/// ```
///
/// ```
///  UnixListener ──accept──▶ ServerCore.accept ──▶ BusConnection (one per client, on one loop of the group)
///                                                   │ session rules on the loop
///                                                   ▼
///                               MethodHandler ──▶ Task / handler queue ──▶ Responder / return value
/// ```
package final class BusServer: Sendable, CustomStringConvertible {
    /// What the server was made with.
    package let configuration: Configuration
    let core: ServerCore
    private let state = Locked(State())

    private enum Phase { case idle, starting, running, stopped }

    private struct State {
        var phase = Phase.idle
        var listener: UnixListener?
        /// The group the server made for itself, shut down with it.
        var ownedGroup: EventLoopGroup?
    }

    /// A server that serves nothing until `start()`. Register handlers before or after starting.
    package init(configuration: Configuration) {
        self.configuration = configuration
        core = ServerCore(configuration: configuration)
    }

    package var description: String { "BusServer(\(configuration.name) at \(configuration.socketPath))" }

    /// Clients connected now.
    package var connectionCount: Int { core.connectionCount }

    /// The connections open now, oldest first.
    package var connections: [BusConnection] { core.connections }

    /// The event loops that serve the connections (none before `start()`): `ServiceWatchdog` watches them turn.
    package var eventLoops: [EventLoop] {
        state.withLock { $0.ownedGroup?.loops } ?? configuration.eventLoopGroup?.loops ?? []
    }

    // MARK: - Start

    /// Binds the socket (following the path rules of `UnixListener`) and starts accepting.
    ///
    /// - Throws: `BusServerError.invalidSocketPath` or `.alreadyStarted`, `ListenerError` (another instance is
    ///   running, the path is occupied), or `SystemError` when the event loops cannot be started.
    package func start() throws {
        let address: UnixSocketAddress
        do {
            address = try UnixSocketAddress(path: configuration.socketPath)
        } catch {
            throw BusServerError.invalidSocketPath(error)
        }
        try state.withLock { state throws(BusServerError) in
            guard state.phase == .idle else { throw .alreadyStarted }
            state.phase = .starting
        }
        var ownedGroup: EventLoopGroup?
        do {
            let group: EventLoopGroup
            if let shared = configuration.eventLoopGroup {
                group = shared
            } else {
                group = try EventLoopGroup(name: configuration.name)
                ownedGroup = group
            }
            let options = UnixListener.Options(
                socketMode: configuration.socketMode,
                connectionOptions: SocketConnection.Options(maxOutboundBytes: configuration.maxOutbound),
                socketActivation: configuration.socketActivation)
            let core = core
            let listener = try UnixListener.listen(on: address, group: group, options: options) { socket in
                core.accept(socket)
            }
            state.withLock { state in
                state.phase = .running
                state.listener = listener
                state.ownedGroup = ownedGroup
            }
        } catch {
            ownedGroup?.shutdown()
            state.withLock { $0.phase = .idle }
            throw error
        }
    }

    // MARK: - Shutdown

    /// Stops the server: stops accepting, answers new requests `503`, lets the requests in flight answer (when
    /// `gracefully`, for at most `timeout`), then closes every connection once its answers are sent.
    ///
    /// Idempotent. Must not be called from a handler that the shutdown would wait for, nor on an event loop.
    ///
    /// - Parameters:
    ///   - gracefully: Whether to wait for in-flight requests; `false` closes at once (their handlers see
    ///     cancellation and their answers are dropped).
    ///   - timeout: How long to wait for in-flight requests.
    package func shutdown(gracefully: Bool = true, timeout: Duration = .seconds(10)) async {
        let (listener, group) = state.withLock { state -> (UnixListener?, EventLoopGroup?) in
            state.phase = .stopped
            defer {
                state.listener = nil
                state.ownedGroup = nil
            }
            return (state.listener, state.ownedGroup)
        }
        // Draining first: once the socket file is gone, every new request is answered 503.
        core.beginDraining()
        listener?.close()
        let connections = core.connections
        if gracefully {
            await Self.waitForAll(connections, timeout: timeout) { connection, done in connection.whenIdle(done) }
        }
        for connection in connections {
            if gracefully { connection.close() } else { connection.socket.close() }
        }
        await Self.waitForAll(connections, timeout: .seconds(2)) { connection, done in
            connection.onClose { _ in done() }
        }
        group?.shutdown()
    }

    /// Waits until `register` has reported every item done, or `timeout` has passed.
    private static func waitForAll<Item>(
        _ items: [Item], timeout: Duration,
        register: (Item, _ done: @escaping @Sendable () -> Void) -> Void
    ) async {
        guard !items.isEmpty else { return }
        await withLockedContinuation { (continuation: LockedContinuation<Void, Never>) in
            let remaining = Locked(items.count)
            let resumed = AtomicFlag()
            let resume: @Sendable () -> Void = {
                if resumed.setOnce() { continuation.resume() }
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(timeout.wholeNanoseconds)) { resume() }
            for item in items {
                register(item) {
                    if remaining.withLock({ count -> Int in
                        count -= 1
                        return count
                    }) == 0 {
                        resume()
                    }
                }
            }
        }
    }
}

extension Duration {
    /// The duration in whole nanoseconds, clamped to `Int`.
    var wholeNanoseconds: Int {
        let (seconds, attoseconds) = components
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        return Int(clamping: product + attoseconds / 1_000_000_000)
    }
}
