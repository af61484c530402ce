import BusProtocol
import Shared

extension StoreService {
    /// Registers one handler per `store.*` method. All are responder handlers on the server's
    /// handler queue (reads block on SQLite; never on an event loop). `store.save` is `.inOrder`:
    /// a connection's saves are queued for the writer one after the other in arrival order, and
    /// each closure returns as soon as its save is queued, so pipelined saves share group commits.
    func registerHandlers() {
        let handlers = self.handlers
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
                responder.respond(with: Result { () throws(RPCError) in try handlers.fetch(params) })
            })
        server.register(
            StoreGet.self,
            responder: { _, params, responder in
                responder.respond(with: Result { () throws(RPCError) in try handlers.get(params) })
            })
        server.register(
            StoreHistory.self,
            responder: { _, params, responder in
                responder.respond(with: Result { () throws(RPCError) in try handlers.history(params) })
            })
        server.register(
            StoreSave.self, ordering: .inOrder, cancellation: .cooperative,
            responder: { _, params, responder in
                handlers.save(params) { responder.respond(with: $0) }
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
                responder.succeed(handlers.stats(connections: server.connectionCount))
            })
    }
}
