import ContextBusObjectGraph
import ContextBusReactive
import ContextBusSupport
import ContextBusWire
import Dispatch

// The four ways to make a call: async, as a Signal, blocking, and untyped. All go through `startCall`, which
// completes exactly once: with the answer, a client-side error, the timeout or the cancellation.

extension BusClient {
    // MARK: - async

    /// Calls `method` and waits for its result.
    ///
    /// ```swift
    /// let saved = try await client.call(StoreSave.self, SaveRequest(inserts: [reading]))
    /// ```
    ///
    /// Cancelling the calling task fails the call with `CancellationError` at once and sends `bus.cancel`.
    ///
    /// - Parameters:
    ///   - method: The method, e.g. `StoreFetch.self`.
    ///   - params: Its params.
    ///   - timeout: Overrides `Options.callTimeout`; when it passes, the call fails with `.timedOut` and the
    ///     client sends `bus.cancel`.
    ///   - model: The store's model, to read a result that needs one (`ModelJSONConvertible`, such as
    ///     `store.fetch`'s objects).
    /// - Returns: The typed result.
    /// - Throws: The service's `RPCError`, `BusClientError`, or `CancellationError`.
    public func call<M: RPCMethod>(
        _ method: M.Type, _ params: M.Params, timeout: Duration? = nil, model: Model? = nil
    ) async throws
        -> M.Result
    {
        try self.decode(M.self, try await call(method: M.name, params: params.json, timeout: timeout), model: model)
    }

    /// Calls a method that takes no params (`bus.ping`, `store.model`, `store.stats`).
    public func call<M: RPCMethod>(
        _ method: M.Type, timeout: Duration? = nil, model: Model? = nil
    ) async throws
        -> M.Result
    where M.Params == EmptyObject {
        try await call(method, EmptyObject(), timeout: timeout, model: model)
    }

    /// Calls a method by name with raw JSON params and returns the raw result (for generic tools like `ctxbus`).
    ///
    /// - Throws: The service's `RPCError`, `BusClientError`, or `CancellationError`.
    public func call(method: String, params: JSONValue? = nil, timeout: Duration? = nil) async throws -> JSONValue {
        try Task.checkCancellation()
        let box = Locked(CancelBox())
        return try await withTaskCancellationHandler {
            try await withLockedThrowingContinuation { continuation in
                let token = startCall(method: method, params: params, timeout: timeout) { outcome in
                    continuation.resume(with: outcome)
                }
                let cancelNow = box.withLock { box -> Bool in
                    box.token = token
                    return box.isCancelled
                }
                if cancelNow { token.cancel() }
            }
        } onCancel: {
            let token = box.withLock { box -> CallToken? in
                box.isCancelled = true
                return box.token
            }
            token?.cancel()
        }
    }

    // MARK: - Signal

    /// A cold signal that sends the request each time it is started, then the result and `completed`, or fails.
    ///
    /// Disposing it before the answer sends `bus.cancel`. Client-side failures arrive as `RPCError`s
    /// (`BusClientError.rpcError`: connection problems are `503`, a timeout `408`). Events are delivered on the
    /// client's loop.
    ///
    /// ```swift
    /// client.request(StoreFetch.self, params)
    ///     .deliver(on: context.scheduler)
    ///     .startWithValues { result in … }
    /// ```
    public func request<M: RPCMethod & SendableMetatype>(
        _ method: M.Type, _ params: M.Params, timeout: Duration? = nil, model: Model? = nil
    )
        -> Signal<M.Result, RPCError>
    {
        let json = params.json
        return Signal { [self] observer, lifetime in
            let token = startCall(method: M.name, params: json, timeout: timeout) { outcome in
                switch outcome.flatMap({ json in Result { try self.decode(M.self, json, model: model) } }) {
                case .success(let result):
                    observer.send(value: result)
                    observer.sendCompleted()
                case .failure(let error):
                    observer.send(error: BusClientError.rpcError(for: error))
                }
            }
            lifetime.observeEnded { token.cancel() }
        }
    }

    // MARK: - Blocking

    /// Calls `method` and blocks the calling thread until the result, for synchronous callers (a
    /// `PersistentStore` implementation).
    ///
    /// - Throws: `BusClientError.wouldBlockEventLoop` at once when called on the client's own loop thread (the
    ///   thread that would have to deliver the answer); otherwise like `call`.
    public func callAndWait<M: RPCMethod>(
        _ method: M.Type, _ params: M.Params, timeout: Duration? = nil, model: Model? = nil
    ) throws
        -> M.Result
    {
        guard !loop.inEventLoop else { throw BusClientError.wouldBlockEventLoop(method: M.name) }
        let answered = DispatchSemaphore(value: 0)
        let outcome = Locked<Result<M.Result, any Error>?>(nil)
        call(method, params, timeout: timeout, model: model) { result in
            outcome.withLock { $0 = result }
            answered.signal()
        }
        answered.wait()
        guard let result = outcome.withLock({ $0 }) else { throw BusClientError.closed(path: socketPath) }
        return try result.get()
    }

    // MARK: - Completion

    /// Calls `method` without blocking; `completion` gets the typed result or the error exactly once, on the
    /// client's loop thread (or on the calling thread when the call is refused at once), so it must only hand
    /// work off.
    ///
    /// - Returns: A token that cancels the call (and sends `bus.cancel`) while it waits.
    @discardableResult
    func call<M: RPCMethod>(
        _ method: M.Type, _ params: M.Params, timeout: Duration? = nil, model: Model? = nil,
        completion: @escaping @Sendable (Result<M.Result, any Error>) -> Void
    ) -> CallToken {
        startCall(method: M.name, params: params.json, timeout: timeout) { outcome in
            completion(outcome.flatMap { json in Result { try self.decode(M.self, json, model: model) } })
        }
    }

    // MARK: - Core

    /// Sends a request on the current connection; `completion` is called exactly once, possibly before this
    /// returns (when the client is not connected). While the client reconnects the call fails at once, or is held
    /// until the connection is back (`Options.callsWhileReconnecting`).
    ///
    /// - Returns: A token that cancels the call (and sends `bus.cancel`) while it waits.
    @discardableResult
    func startCall(
        method: String, params: JSONValue?, timeout: Duration?,
        completion: @escaping @Sendable (Result<JSONValue, any Error>) -> Void
    ) -> CallToken {
        let timeout = timeout ?? options.callTimeout
        enum Route {
            case send(ClientSession)
            case refuse(BusClientError)
            case held(HeldCall)
        }
        let route = state.withLock { state -> Route in
            if state.isClosed { return .refuse(.closed(path: socketPath)) }
            if let session = state.session { return .send(session) }
            guard options.callsWhileReconnecting == .wait, case .reconnecting = state.connectionState else {
                return .refuse(.notConnected(path: socketPath))
            }
            let call = HeldCall(method: method, params: params, timeout: timeout, completion: completion)
            state.heldCalls.append(call)
            return .held(call)
        }
        switch route {
        case .send(let session):
            return send(method: method, params: params, timeout: timeout, on: session, completion: completion)
        case .refuse(let error):
            completion(.failure(error))
            return CallToken()
        case .held(let call):
            scheduleTimeout(of: call)
            return CallToken { [weak self] in self?.cancelHeld(call) }
        }
    }

    /// Sends a request on `session`.
    func send(
        method: String, params: JSONValue?, timeout: Duration?, on session: ClientSession,
        completion: @escaping @Sendable (Result<JSONValue, any Error>) -> Void
    ) -> CallToken {
        let id = session.makeID()
        sentRequests.add(1, ordering: .relaxed)
        session.send(id: id, method: method, params: params, timeout: timeout, completion: completion)
        return CallToken(session: session, id: id)
    }

    func decode<M: RPCMethod>(_ method: M.Type, _ json: JSONValue, model: Model?) throws -> M.Result {
        do {
            return try M.Result(json: json, model: model ?? self.model)
        } catch {
            throw BusClientError.malformedResult(method: M.name, error)
        }
    }
}

/// Cancels one waiting call.
struct CallToken: Sendable {
    private let action: (@Sendable () -> Void)?

    /// A token for a call that has already been answered (refused): cancelling it does nothing.
    init() {
        action = nil
    }

    /// A token for a call sent on `session` as `id`.
    init(session: ClientSession, id: Int64) {
        action = { session.finish(id, with: .failure(CancellationError()), sendCancel: true) }
    }

    /// A token that runs `cancel`.
    init(cancel: @escaping @Sendable () -> Void) {
        action = cancel
    }

    /// Fails the call with `CancellationError` (sending `bus.cancel` if it was sent), if it is still waiting.
    func cancel() {
        action?()
    }
}

/// A call's token and whether its task was cancelled, for the race between the two.
struct CancelBox {
    var token: CallToken?
    var isCancelled = false
}
