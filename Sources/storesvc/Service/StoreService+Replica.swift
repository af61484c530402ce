import ContextBusObjectGraph
import ContextBusWire

extension StoreService {
    /// Registers the replication methods (docs/protocol.md, "Replication"), on the handler queue: each reads, or
    /// writes a small transaction of its own.
    func registerReplicaHandlers() {
        let handlers = self.handlers
        server.register(
            StoreReplica.self,
            responder: { _, params, responder in
                responder.respond(with: Result { () throws(RPCError) in try handlers.replica(params) })
            })
        server.register(
            StoreReplicaChanges.self,
            responder: { _, params, responder in
                responder.respond(with: Result { () throws(RPCError) in try handlers.replicaChanges(params) })
            })
        server.register(
            StoreReplicaIDs.self,
            responder: { _, params, responder in
                responder.respond(with: Result { () throws(RPCError) in try handlers.replicaIDs(params) })
            })
    }
}
