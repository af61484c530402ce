import ContextBusObjectGraph
import ContextBusReactive
import ContextBusSupport
import ContextBusTransport
import ContextBusWire
import Dispatch
import Synchronization

/// A connection to a ContextBus service (`storesvc`, `devicesvc`) that makes typed calls and receives events.
///
/// ```swift
/// let client = try await BusClient.connect(to: "/run/ctxbus/store.sock", clientName: "reporter")
/// let result = try await client.call(StoreFetch.self, FetchParams(entity: "Reading"))
/// client.events(ChangedEvent.self).startWithValues { change in … }
/// ```
///
/// Calls are pipelined: any number may be in flight, and answers are matched by id in whatever order they come.
/// The same call is available four ways: `async` (`call`), as a cold `Signal` (`request`), blocking
/// (`callAndWait`, refused on the client's own loop thread) and untyped (`call(method:params:)`). Cancelling the
/// task, disposing the signal or passing a call's timeout sends `bus.cancel` for it.
///
/// When the connection is lost, every waiting call fails with `BusClientError.disconnected`. With a
/// `ReconnectPolicy` the client then reconnects with backoff, says `bus.hello` again and calls the
/// `onReconnect` hooks, where a higher layer re-creates its server-side state (subscriptions with `since`).
/// Calls made while reconnecting fail at once with `notConnected`, or with `Options.callsWhileReconnecting` set to
/// `.wait` are held and sent once it is back; `stateChanges` tells when it is.
///
/// Answers, events and state changes are delivered on the client's event loop thread: keep observers short,
/// and hop elsewhere (`deliver(on:)`) for real work. Blocking calls made there fail fast.
public final class BusClient: Sendable, CustomStringConvertible {
    /// The socket path.
    public let socketPath: String
    /// The name sent in `bus.hello`.
    public let clientName: String
    /// How this client connects, waits and reconnects.
    public let options: Options
    /// The loop serving the connection.
    public let loop: EventLoop
    let address: UnixSocketAddress
    let state: Locked<State>
    let eventObservers = ObserverBag<RPCEvent>()
    let stateObservers = ObserverBag<ConnectionState>()
    /// Serialises state deliveries, so observers see the states in the order they happened.
    let stateQueue = DispatchQueue(label: "bus-client.state")
    let sentRequests = Atomic<Int64>(0)
    private let defaultModel = Locked<Model?>(nil)
    private let requestedModelVersion = Locked<String?>(nil)

    /// The store model a call's result is read with when the call names none (`call(_:_:timeout:model:)`):
    /// results such as `store.fetch`'s objects are typed by it. `RemoteStore` sets it when it opens.
    public var model: Model? {
        get { defaultModel.withLock { $0 } }
        set { defaultModel.withLock { $0 = newValue } }
    }

    /// The model version hash sent as `"model"` in the params of every `store.*` call but `store.model`
    /// (`ModelVersionPrecondition`): storesvc then answers `412` instead of serving a call made for a model it no
    /// longer serves (a migration since the client read it). `RemoteStore` sets it when it opens; `nil` (the
    /// default) sends none.
    public var modelVersion: String? {
        get { requestedModelVersion.withLock { $0 } }
        set { requestedModelVersion.withLock { $0 = newValue } }
    }

    struct State {
        var session: ClientSession?
        var connectionState: ConnectionState
        var isClosed = false
        var reconnectTimer: ScheduledWork?
        var reconnectHooks: [UInt64: @Sendable (HelloResult) -> Void] = [:]
        var nextHookKey: UInt64 = 0
        /// Calls made while reconnecting, in order (`CallsWhileReconnecting.wait`).
        var heldCalls: [HeldCall] = []
    }

    private init(
        socketPath: String, address: UnixSocketAddress, clientName: String, options: Options, loop: EventLoop,
        hello: HelloResult
    ) {
        self.socketPath = socketPath
        self.address = address
        self.clientName = clientName
        self.options = options
        self.loop = loop
        state = Locked(State(connectionState: .connected(hello)))
    }

    deinit {
        state.withLock { $0.session }?.close(with: .closed(path: socketPath))
    }

    public var description: String { "BusClient(\(clientName) → \(socketPath))" }

    /// The number of calls this client has made since it was made (`call`, `request`, `callAndWait`, on every
    /// connection): a diagnostic, e.g. to check that something needs no round trip.
    public var requestsSent: Int64 { sentRequests.load(ordering: .relaxed) }

    // MARK: - Connecting

    /// Connects to the service at `path` and completes `bus.hello`.
    ///
    /// - Parameters:
    ///   - path: The service's socket, e.g. `$CTXBUS_RUNTIME_DIR/store.sock`.
    ///   - clientName: Sent in `bus.hello`, for the service's logs and `author`s.
    ///   - options: Loop, timeouts, reconnect policy.
    /// - Returns: A connected client.
    /// - Throws: `BusClientError`: `.noService(path:)` when nothing listens there, `.rejected` when the service
    ///   refuses the session (403, protocol), `.permissionDenied`, `.cannotConnect`, `.timedOut`.
    public static func connect(
        to path: String, clientName: String, options: Options = Options()
    ) async throws -> BusClient {
        let address: UnixSocketAddress
        do {
            address = try UnixSocketAddress(path: path)
        } catch {
            throw BusClientError.cannotConnect(path: path, reason: error.description)
        }
        let loop = try options.eventLoop ?? sharedEventLoop()
        let handshake = try await withLockedThrowingContinuation { continuation in
            // Holds the session's events and close until the client exists; the first session reports nothing
            // else before it is installed.
            let pendingClient = Locked(WeakClient())
            openSession(
                address: address, clientName: clientName, options: options, loop: loop,
                onEvent: { event in pendingClient.withLock { $0.client }?.eventObservers.send(event) },
                onClose: { session, reason in
                    pendingClient.withLock { $0.client }?.sessionClosed(session, reason: reason)
                }
            ) { result in
                switch result {
                case .success(let (session, hello)):
                    let client = BusClient(
                        socketPath: path, address: address, clientName: clientName, options: options, loop: loop,
                        hello: hello)
                    pendingClient.withLock { $0.client = client }
                    continuation.resume(returning: ClientHandshake(client: client, session: session, hello: hello))
                case .failure(let error):
                    continuation.resume(throwing: error)
                }
            }
        }
        handshake.client.install(handshake.session, hello: handshake.hello, isReconnect: false)
        return handshake.client
    }

    /// The loop shared by clients that do not bring their own, started on first use.
    ///
    /// - Throws: `SystemError` when the loop's thread cannot be started.
    public static func sharedEventLoop() throws -> EventLoop {
        try sharedLoop.withLock { loop throws -> EventLoop in
            if let loop { return loop }
            let made = try EventLoop(name: "bus-client")
            loop = made
            return made
        }
    }

    private static let sharedLoop = Locked<EventLoop?>(nil)

    /// Connects a socket, starts a session on it and says `bus.hello`; `completion` gets the session and the
    /// answer, or why not. The session's callbacks go to `onEvent` and `onClose` from the start.
    static func openSession(
        address: UnixSocketAddress, clientName: String, options: Options, loop: EventLoop,
        onEvent: @escaping @Sendable (RPCEvent) -> Void,
        onClose: @escaping @Sendable (ClientSession, String) -> Void,
        completion: @escaping @Sendable (Result<(ClientSession, HelloResult), BusClientError>) -> Void
    ) {
        let socket: SocketConnection
        do {
            socket = try SocketConnection.connect(
                to: address, on: loop, options: SocketConnection.Options(maxOutboundBytes: options.maxOutbound),
                timeout: options.connectTimeout)
        } catch {
            completion(.failure(BusClientError(error, path: address.path)))
            return
        }
        let session = ClientSession(
            socket: socket, path: address.path, maxFrame: options.maxFrame, onEvent: onEvent, onClose: onClose)
        session.start()
        let params = HelloParams(client: clientName)
        session.send(
            id: session.makeID(), method: BusHello.name, params: params.json, timeout: options.connectTimeout
        ) { outcome in
            switch outcome {
            case .success(let json):
                do throws(RPCError) {
                    let hello = try HelloResult(json: json)
                    completion(.success((session, hello)))
                } catch {
                    session.close(with: .malformedResult(method: BusHello.name, error))
                    completion(.failure(.malformedResult(method: BusHello.name, error)))
                }
            case .failure(let error as RPCError):
                session.close(with: .rejected(path: address.path, error))
                completion(.failure(.rejected(path: address.path, error)))
            case .failure(let error as BusClientError):
                session.close(with: error)
                completion(.failure(error))
            case .failure(let error):
                let failure = BusClientError.cannotConnect(path: address.path, reason: String(describing: error))
                session.close(with: failure)
                completion(.failure(failure))
            }
        }
    }

    /// Makes `session` the client's connection and publishes the new state (and runs the reconnect hooks).
    ///
    /// Calls held while reconnecting are sent first, in order; calls made while they are being sent are held
    /// behind them, so that every call goes out in the order it was made.
    func install(_ session: ClientSession, hello: HelloResult, isReconnect: Bool) {
        guard let hooks = sendHeldCallsAndInstall(session, hello: hello) else {
            session.close(with: .closed(path: socketPath))
            return
        }
        // A session that ended before it was installed was not reported; report it now (once).
        if let failure = session.failure { sessionClosed(session, reason: failure.description) }
        guard isReconnect else { return }
        publish(.connected(hello))
        if !hooks.isEmpty {
            DispatchQueue.global().async {
                for hook in hooks { hook(hello) }
            }
        }
    }

    /// Sends the held calls on `session` until none is left, then makes it the client's connection, in one
    /// critical section with the check that none is left. Returns the reconnect hooks, or `nil` when closed.
    private func sendHeldCallsAndInstall(
        _ session: ClientSession, hello: HelloResult
    ) -> [@Sendable (HelloResult) -> Void]? {
        enum Step {
            case closed
            case send([HeldCall])
            case installed(hooks: [@Sendable (HelloResult) -> Void])
        }
        while true {
            let step = state.withLock { state -> Step in
                guard !state.isClosed else { return .closed }
                if !state.heldCalls.isEmpty {
                    defer { state.heldCalls = [] }
                    return .send(state.heldCalls)
                }
                state.session = session
                state.connectionState = .connected(hello)
                return .installed(hooks: Array(state.reconnectHooks.values))
            }
            switch step {
            case .closed: return nil
            case .send(let calls): for call in calls { call.send(on: session, by: self) }
            case .installed(let hooks): return hooks
            }
        }
    }

    // MARK: - State

    /// The connection's state now.
    public var connectionState: ConnectionState { state.withLock { $0.connectionState } }

    /// The service's `bus.hello` answer on the current connection, when connected.
    public var hello: HelloResult? {
        if case .connected(let hello) = connectionState { return hello }
        return nil
    }

    /// The connection's state, then every change, in order; completes after a final state.
    public var stateChanges: Signal<ConnectionState, Never> {
        Signal { [self] observer, lifetime in
            // A change published while this observer was being added can be seen twice: pass each state once.
            let last = Locked<ConnectionState?>(nil)
            let deduplicated = Observer<ConnectionState, Never>(
                value: { state in
                    let isNew = last.withLock { last -> Bool in
                        defer { last = state }
                        return last != state
                    }
                    if isNew { observer.send(value: state) }
                },
                completed: { observer.sendCompleted() })
            stateQueue.async { [self] in
                guard !lifetime.hasEnded else { return }
                let current = connectionState
                deduplicated.send(value: current)
                if current.isFinal {
                    deduplicated.sendCompleted()
                    return
                }
                guard let key = stateObservers.add(deduplicated) else { return }
                lifetime.observeEnded { [self] in stateObservers.remove(key) }
            }
        }
    }

    /// Delivers a state change to the observers, in order.
    func publish(_ newState: ConnectionState) {
        stateQueue.async { [self] in
            stateObservers.send(newState)
            if newState.isFinal { stateObservers.complete() }
        }
    }

    /// Runs `action` (on a global queue) after every successful reconnection, once the connection is usable
    /// again: re-create server-side state here, e.g. resubscribe with `since` = the last transaction seen.
    ///
    /// - Returns: A disposable that removes the hook.
    @discardableResult
    public func onReconnect(_ action: @escaping @Sendable (HelloResult) -> Void) -> any Disposable {
        let key = state.withLock { state -> UInt64 in
            state.nextHookKey += 1
            state.reconnectHooks[state.nextHookKey] = action
            return state.nextHookKey
        }
        return AnyDisposable { [state] in
            _ = state.withLock { $0.reconnectHooks.removeValue(forKey: key) }
        }
    }

    // MARK: - Closing

    /// Closes the connection for good: waiting calls fail with `.closed`, event signals complete, no reconnect.
    public func close() {
        let (session, timer, held) = state.withLock { state -> (ClientSession?, ScheduledWork?, [HeldCall]) in
            guard !state.isClosed else { return (nil, nil, []) }
            state.isClosed = true
            state.connectionState = .closed
            defer {
                state.session = nil
                state.reconnectTimer = nil
                state.heldCalls = []
            }
            return (state.session, state.reconnectTimer, state.heldCalls)
        }
        timer?.cancel()
        session?.close(with: .closed(path: socketPath))
        for call in held { call.fail(BusClientError.closed(path: socketPath)) }
        publish(.closed)
        eventObservers.complete()
    }
}

/// The client made for a first session, with the session and its hello answer.
private struct ClientHandshake: Sendable {
    var client: BusClient
    var session: ClientSession
    var hello: HelloResult
}

/// A weak reference to a client, so that its session's callbacks do not keep it alive.
struct WeakClient {
    weak var client: BusClient?
}
