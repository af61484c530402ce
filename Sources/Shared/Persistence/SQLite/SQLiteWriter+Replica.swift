import ContextBusObjectGraph

/// The writer's part in replication (docs/fleet.md): registering the store as a gateway, recording the bridge's
/// progress, and resolving a save from another gateway before it is planned.
extension SQLiteWriter {
    /// `request` resolved against the replica tables when it has an origin (`nil` when that transaction was
    /// applied before); `nil` for a local save.
    ///
    /// - Throws: `StoreError.invalidRequest` when the store is not registered as a gateway.
    func resolvedReplicaSave(_ request: SaveRequest) throws -> ResolvedReplicaSave? {
        guard let origin = request.origin else { return nil }
        guard replica.gateway != nil else {
            throw StoreError.invalidRequest(
                field: "origin", message: "the store is not registered as a gateway of a fleet (store.replica)")
        }
        guard origin.gateway != replica.gateway else {
            throw StoreError.invalidRequest(
                field: "origin.gateway", message: "a transaction of this gateway cannot be applied to it again")
        }
        let resolver = ReplicaResolver(
            model: replica.modelForResolving, source: replica.source(over: self, connection: connection))
        return try resolver.resolve(request, origin: origin)
    }

    /// Registers the store as gateway `name` (see `SQLiteReplica.register`), in a transaction of its own.
    func registerReplica(_ name: String) throws {
        try inReplicaTransaction { connection in try replica.register(name, on: connection) }
    }

    /// Records the bridge's progress (see `SQLiteReplica.recordProgress`), in a transaction of its own.
    func recordReplicaProgress(published: Int64?, position: Int64?) throws {
        try inReplicaTransaction { connection in
            try replica.recordProgress(published: published, position: position, on: connection)
        }
    }

    private func inReplicaTransaction(_ body: (SQLiteConnection) throws -> Void) throws {
        try queue.sync {
            guard !isClosedForReplica else { throw StoreError.unavailable("the store is closed") }
            try connection.execute("BEGIN IMMEDIATE")
            do {
                try body(connection)
                try connection.execute("COMMIT")
            } catch {
                try? connection.execute("ROLLBACK")
                throw error
            }
        }
    }
}
