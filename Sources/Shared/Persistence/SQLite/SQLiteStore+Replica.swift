import ContextBusObjectGraph
import Foundation

/// A SQLite store as a member of a fleet (docs/fleet.md): the replica state lives in the same database, so a
/// replicated save, its origin, the objects' fleet-wide IDs and their clocks commit in one transaction.
extension SQLiteStore: ReplicatedStore {
    public func replicaState(registering gateway: String?) throws -> ReplicaState {
        guard !isClosedForSaves else { throw StoreError.unavailable("the store is closed") }
        if let gateway { try writerForSaves.registerReplica(gateway) }
        return try readers.read { connection, txn in try SQLiteReplica.state(on: connection, lastTxn: txn) }
    }

    public func recordReplicaProgress(published: Int64?, position: Int64?) throws -> ReplicaState {
        guard !isClosedForSaves else { throw StoreError.unavailable("the store is closed") }
        try writerForSaves.recordReplicaProgress(published: published, position: position)
        return try replicaState(registering: nil)
    }

    public func fleetIDs(of ids: [ObjectID]) throws -> [ObjectID: String] {
        try readers.read { connection, _ in try SQLiteReplica.fleetIDs(of: ids, on: connection) }
    }

    public func localIDs(forFleetIDs fleetIDs: [String]) throws -> [String: ObjectID] {
        try readers.read { connection, _ in try SQLiteReplica.localIDs(forFleetIDs: fleetIDs, on: connection) }
    }

    /// Only what a sync made durable: a transaction a power cut can still lose is never published, so that no other
    /// gateway keeps what this one lost (`docs/decisions/fleet-publishes-only-durable-transactions.md`). When later
    /// transactions wait, a sync is asked for, so that they follow within `DurablePosition.interval` or so.
    public func replicaHistory(since: Int64, limit: Int) throws -> [(changes: ChangeSet, clock: Int64)] {
        let durable = durableTransaction
        if lastTransaction > durable { makeDurableSoon() }
        guard since < durable else { return [] }
        return try history(since: since, limit: limit).prefix { $0.txn <= durable }.map {
            ($0, SQLiteReplica.clock(of: $0.time))
        }
    }
}
