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

    public func replicaHistory(since: Int64, limit: Int) throws -> [(changes: ChangeSet, clock: Int64)] {
        try history(since: since, limit: limit).map { ($0, SQLiteReplica.clock(of: $0.time)) }
    }
}
