import ContextBusSupport
import ContextBusTransport
import ContextBusWire
import Dispatch
import Synchronization

/// What the connections of one `BusServer` share: the configuration, the handler registry, the handler queue
/// and the table of open connections. Connections keep it alive; it does not keep the `BusServer` alive.
final class ServerCore: Sendable {
    let configuration: BusServer.Configuration
    let handlerQueue: DispatchQueue
    /// Where async handlers' tasks run: the handler queue.
    let executor: HandlerExecutor
    /// Frames answers and events, refusing any larger than `maxFrame` (answered `-32603` instead).
    let frameEncoder: FrameEncoder
    private let handlers = Locked<[String: MethodHandler]>([:])
    private let state = Locked(State())
    /// Connections dropped because their outbound queue overflowed (`bus.overflow`), for the metrics.
    let overflowDrops = Atomic<Int64>(0)
    /// Peers refused with `403`, for the metrics.
    let refusedPeers = Atomic<Int64>(0)

    private struct State {
        var connections: [UInt64: BusConnection] = [:]
        var nextID: UInt64 = 1
        var isDraining = false
    }

    init(configuration: BusServer.Configuration) {
        self.configuration = configuration
        handlerQueue =
            configuration.handlerQueue
            ?? DispatchQueue(label: "\(configuration.name).bus-handlers", attributes: .concurrent)
        frameEncoder = FrameEncoder(maximumLength: configuration.maxFrame)
        executor = HandlerExecutor(queue: handlerQueue)
    }

    // MARK: - Handlers

    func register(_ name: String, _ handler: MethodHandler) {
        precondition(!name.hasPrefix("bus."), "the bus.* methods are the server's own; '\(name)' cannot be registered")
        handlers.withLock { $0[name] = handler }
    }

    /// Registers one of the server's own `bus.*` methods that runs as a handler (`bus.metrics`).
    func registerServerMethod(_ name: String, _ handler: MethodHandler) {
        precondition(name.hasPrefix("bus."), "'\(name)' is not a server method")
        handlers.withLock { $0[name] = handler }
    }

    func handler(for method: String) -> MethodHandler? {
        handlers.withLock { $0[method] }
    }

    /// The error a client sees for `error`: an `RPCError` as it is, a `CancellationError` as `499`, anything else
    /// as a bare `-32603` whose details go to `onHandlerError` only.
    func rpcError(for error: any Error, in request: BusRequest) -> RPCError {
        if let error = error as? RPCError { return error }
        if error is CancellationError { return .cancelled() }
        report(method: request.method, error: error)
        return .internalError()
    }

    func report(method: String, error: any Error) {
        configuration.onHandlerError?(method, error)
    }

    func helloResult(for peer: PeerCredentials) -> HelloResult {
        HelloResult(
            server: configuration.name, version: configuration.version, maxFrame: configuration.maxFrame,
            maxInFlight: configuration.maxInFlight, peer: peer)
    }

    // MARK: - Connections

    /// Takes a freshly accepted socket (on its loop).
    func accept(_ socket: SocketConnection) {
        guard let peer = try? socket.peerCredentials() else {
            socket.close()
            return
        }
        let connection = state.withLock { state -> BusConnection? in
            guard !state.isDraining else { return nil }
            let connection = BusConnection(id: state.nextID, peer: peer, socket: socket, core: self)
            state.nextID += 1
            state.connections[connection.id] = connection
            return connection
        }
        guard let connection else {
            socket.close()
            return
        }
        connection.start()
    }

    func remove(_ connection: BusConnection) {
        _ = state.withLock { $0.connections.removeValue(forKey: connection.id) }
    }

    var connections: [BusConnection] {
        state.withLock { $0.connections.values.sorted { $0.id < $1.id } }
    }

    var connectionCount: Int { state.withLock { $0.connections.count } }

    /// Connections accepted since the server started.
    var acceptedCount: UInt64 { state.withLock { $0.nextID - 1 } }

    var isDraining: Bool { state.withLock { $0.isDraining } }

    /// From now on, new connections are closed and new requests answered `503`.
    func beginDraining() {
        state.withLock { $0.isDraining = true }
    }
}
