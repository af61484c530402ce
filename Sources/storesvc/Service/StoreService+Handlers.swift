import ContextBusObjectGraph
import ContextBusWire

extension StoreService {
    /// Registers one handler per `store.*` method, all responder handlers. `store.save` is `.inOrder`:
    /// a connection's saves are queued for the writer one after the other in arrival order, and
    /// each closure returns as soon as its save is queued, so pipelined saves share group commits.
    ///
    /// Small saves and small gets run on the connection's event loop, right after their frame is read
    /// (`HandlerPlacement`): a save only decodes and queues its change set, and a get of a few objects is one
    /// short read transaction, so a hand-off to the handler queue (a wake-up, and on a busy machine a wait for
    /// a CPU) would cost more than the work. Larger ones, and every other read, run on the handler queue.
    func registerHandlers() {
        let handlers = self.handlers
        let model = handlers.store.model
        let hub = self.hub
        let server = self.server
        server.register(
            StoreModel.self,
            responder: { _, _, responder in
                responder.succeed(handlers.model())
            })
        server.register(
            StoreFetch.self,
            responder: { _, params, responder in
                do {
                    responder.succeed(writing: try handlers.fetch(params))
                } catch {
                    responder.fail(error)
                }
            })
        server.register(
            StoreGet.self, placement: .eventLoop(when: { Self.isSmallRead($0, in: model) }),
            responder: { _, params, responder in
                do {
                    responder.succeed(writing: try handlers.get(params))
                } catch {
                    responder.fail(error)
                }
            })
        server.register(
            StoreAggregate.self,
            responder: { _, params, responder in
                responder.respond(with: Result { () throws(RPCError) in try handlers.aggregate(params) })
            })
        server.register(
            StoreHistory.self,
            responder: { _, params, responder in
                responder.respond(with: Result { () throws(RPCError) in try handlers.history(params) })
            })
        server.register(
            StoreSave.self, ordering: .inOrder, cancellation: .cooperative,
            placement: .eventLoop(when: { $0.objectCount <= Self.loopSaveLimit }),
            responder: { request, params, responder in
                // Answered on the connection's loop: the store calls back on its writer's thread, which must only
                // hand the answer off (no hop through a global queue on the way). The answer is written as text.
                let loop = request.connection.loop
                handlers.save(params) { outcome in
                    loop.execute {
                        switch outcome {
                        case .success(let result): responder.succeed(writing: result)
                        case .failure(let error): responder.fail(error)
                        }
                    }
                }
            })
        server.register(
            StoreBatch.self, ordering: .inOrder, cancellation: .cooperative,
            responder: { request, params, responder in
                // As a save's: from the writer's thread straight to the connection's loop.
                let loop = request.connection.loop
                handlers.batch(params) { outcome in loop.execute { responder.respond(with: outcome) } }
            })
        server.register(
            StoreSubscribe.self,
            responder: { request, params, responder in
                let connection = request.connection
                do {
                    let result = try handlers.subscribe(params, connection: connection)
                    connection.onClose { _ in hub.connectionClosed(connection.id) }
                    // The result is in the connection's queue when `succeed` returns: events follow it.
                    responder.succeed(result)
                    hub.activate(result.subscription)
                } catch {
                    responder.fail(error)
                }
            })
        let watches = self.watches
        server.register(
            StoreWatch.self,
            responder: { request, params, responder in
                let connection = request.connection
                do {
                    let result = try watches.watch(params, connection: connection)
                    connection.onClose { _ in watches.connectionClosed(connection.id) }
                    // The result is in the connection's queue when `succeed` returns: events follow it.
                    responder.succeed(result)
                    watches.activate(result)
                } catch {
                    responder.fail(error)
                }
            })
        server.register(
            StoreUnwatch.self,
            responder: { request, params, responder in
                responder.respond(
                    with: Result { () throws(RPCError) in
                        try watches.unwatch(params.watch, connectionID: request.connection.id)
                        return EmptyObject()
                    })
            })
        server.register(
            StoreUnsubscribe.self,
            responder: { request, params, responder in
                responder.respond(
                    with: Result { () throws(RPCError) in
                        try handlers.unsubscribe(params, connectionID: request.connection.id)
                    })
            })
        server.register(
            StoreStats.self,
            responder: { _, _, responder in
                var stats = handlers.stats(connections: server.connectionCount)
                stats.other["watches"] = .int(Int64(watches.count))
                responder.succeed(stats)
            })
        registerReplicaHandlers()
    }

    /// The most IDs a `store.get` may name to be served on the event loop.
    static let loopReadLimit = 16

    /// Whether a `store.get` is small enough for the event loop: a few IDs, and no to-many arrays to read
    /// (asked as faults, or none in their entities), since one such array can hold any number of IDs.
    static func isSmallRead(_ params: GetParams, in model: Model) -> Bool {
        guard params.ids.count <= loopReadLimit else { return false }
        return params.toMany == .faults
            || params.ids.allSatisfy { id in
                model.entity(named: id.entity)?.relationships.allSatisfy { !$0.isToMany } ?? true
            }
    }
    /// The most objects a `store.save` may insert, update and delete to be decoded and queued on the event loop.
    static let loopSaveLimit = 64
}
