import ContextBusSupport
import ContextBusWire

// Registering one handler per method. Two styles:
//
// - async: `{ request, params in … return result }`, run as a task whose executor preference is the handler
//   queue (not Swift's cooperative pool), so a handler that blocks starves neither the process's other tasks
//   nor other handlers; throw to fail.
// - responder: `{ request, params, responder in … }`, run on the server's handler queue, where it may block;
//   it answers through the `Responder`, now or later, from any thread.
//
// Params are read (`M.Params(json:model:)`, with `Configuration.model`) off the loop, just before the handler runs; a params error is answered
// `-32602` without calling the handler.

extension BusServer {
    /// Registers an async handler for method `M`, replacing any earlier one.
    ///
    /// ```swift
    /// server.register(StoreGet.self) { request, params in try await reader.get(params.ids) }
    /// ```
    ///
    /// - Parameters:
    ///   - method: The method, e.g. `StoreFetch.self`. `bus.*` methods belong to the server and trap.
    ///   - ordering: `.inOrder` to run this method's requests of one connection one at a time, in arrival order.
    ///   - cancellation: What `bus.cancel` does to a running request (`.immediate` answers `499` at once).
    ///   - handler: Returns the result or throws: an `RPCError` is answered as it is, `CancellationError` as
    ///     `499`, anything else as a bare `-32603`.
    package func register<M: RPCMethod>(
        _ method: M.Type, ordering: HandlerOrdering = .concurrent, cancellation: CancellationMode = .immediate,
        _ handler: @escaping @Sendable (_ request: BusRequest, _ params: M.Params) async throws -> M.Result
    ) {
        let executor = core.executor
        let model = configuration.model
        core.register(
            M.name,
            MethodHandler(ordering: ordering, cancellation: cancellation) { request, params, finished in
                let task = Task(executorPreference: executor) {
                    defer { finished() }
                    guard request.markStarted() else { return }
                    let outcome: Result<JSONValue, any Error>
                    do {
                        let typed = try M.Params(json: params ?? .object([:]), model: model)
                        outcome = .success(try await handler(request, typed).json)
                    } catch {
                        outcome = .failure(error)
                    }
                    request.connection.answer(request, with: outcome)
                }
                request.attach(task)
            })
    }

    /// Registers a responder handler for method `M`, replacing any earlier one. It runs on the handler queue,
    /// may block there, and answers through its `Responder` at any time, from any thread.
    ///
    /// ```swift
    /// server.register(StoreSave.self, ordering: .inOrder, cancellation: .cooperative) { request, params, responder in
    ///     root.enqueue(params) { responder.respond(with: $0) }   // enqueued in arrival order, answered when durable
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - method: The method. `bus.*` methods belong to the server and trap.
    ///   - ordering: `.inOrder` to run this method's requests of one connection one at a time, in arrival order;
    ///     the next one may start as soon as this closure returns, even if it has not answered yet.
    ///   - cancellation: What `bus.cancel` does to a running request.
    ///   - placement: `.handlerQueue` (default), or `.eventLoop` / `.eventLoop(when:)` for requests the handler
    ///     serves without blocking: they run on the connection's loop as soon as they are read (an `.inOrder`
    ///     request whose turn comes later runs on the thread that ended the turn before it).
    ///   - handler: Called with the request, its typed params and the responder.
    package func register<M: RPCMethod & SendableMetatype>(
        _ method: M.Type, ordering: HandlerOrdering = .concurrent, cancellation: CancellationMode = .immediate,
        placement: HandlerPlacement<M.Params> = .handlerQueue,
        responder handler:
            @escaping @Sendable (_ request: BusRequest, _ params: M.Params, _ responder: Responder<M>)
            -> Void
    ) {
        let queue = core.handlerQueue
        let model = configuration.model
        guard let runsOnLoop = placement.runsOnLoop else {
            core.register(
                M.name,
                MethodHandler(ordering: ordering, cancellation: cancellation) { request, params, finished in
                    queue.async {
                        defer { finished() }
                        guard request.markStarted() else { return }
                        let typed: M.Params
                        do {
                            typed = try M.Params(json: params ?? .object([:]), model: model)
                        } catch {
                            request.connection.answer(request, with: .failure(error))
                            return
                        }
                        handler(request, typed, Responder(request: request))
                    }
                })
            return
        }
        core.register(
            M.name,
            MethodHandler(ordering: ordering, cancellation: cancellation) { request, params, finished in
                // On the loop (or the thread that ended the previous `.inOrder` turn): read the params here, then
                // run here or hand off.
                let typed: M.Params
                do {
                    typed = try M.Params(json: params ?? .object([:]), model: model)
                } catch {
                    if request.markStarted() { request.connection.answer(request, with: .failure(error)) }
                    finished()
                    return
                }
                guard runsOnLoop(typed) else {
                    queue.async {
                        defer { finished() }
                        guard request.markStarted() else { return }
                        handler(request, typed, Responder(request: request))
                    }
                    return
                }
                defer { finished() }
                guard request.markStarted() else { return }
                handler(request, typed, Responder(request: request))
            })
    }
}
