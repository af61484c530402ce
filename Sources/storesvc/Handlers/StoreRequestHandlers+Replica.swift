import ContextBusObjectGraph
import ContextBusSupport
import ContextBusWire

/// The replication methods (`store.replica`, `store.replicaChanges`, `store.replicaIDs`; docs/protocol.md,
/// "Replication"), which the fleet bridge calls. Only a `ReplicatedStore` serves them; any other store answers
/// `-32601`-like `-32602` naming the method's first field.
extension StoreRequestHandlers {
    private var replicatedStore: (any ReplicatedStore)? { store as? any ReplicatedStore }

    private func requireReplicatedStore() throws(RPCError) -> any ReplicatedStore {
        guard let store = replicatedStore else {
            throw .invalidParams(field: nil, message: "this store cannot be a fleet member")
        }
        return store
    }

    /// `store.replica`: registers (with `gateway`), records progress (`published`, `position`), answers the state.
    func replica(_ params: ReplicaParams) throws(RPCError) -> ReplicaStateResult {
        let store = try requireReplicatedStore()
        return ReplicaStateResult(
            try perform {
                if let gateway = params.gateway { _ = try store.replicaState(registering: gateway) }
                if params.published != nil || params.position != nil {
                    return try store.recordReplicaProgress(published: params.published, position: params.position)
                }
                return try store.replicaState(registering: nil)
            })
    }

    /// `store.replicaChanges`: full change sets after `since`, up to the durable position (a sync is asked for when
    /// later ones wait), with their clocks and the fleet-wide IDs of the objects they name (and point at) that came
    /// from other gateways.
    func replicaChanges(_ params: HistoryParams) throws(RPCError) -> ReplicaChangesResult {
        let store = try requireReplicatedStore()
        let limit = min(params.limit ?? historyPageLimit, historyPageLimit)
        return try perform {
            let lastTxn = store.lastTransaction
            let durableBefore = store.durableTransaction
            let transactions = try store.replicaHistory(since: params.since, limit: limit)
            let durable = max(durableBefore, transactions.last?.changes.txn ?? 0)
            var named = Set<ObjectID>()
            for (changes, _) in transactions {
                for snapshot in changes.inserted + changes.updated.map(\.snapshot) + changes.deleted {
                    named.insert(snapshot.id)
                    for value in snapshot.values.values { named.formUnion(value.referencedIDs) }
                }
            }
            return ReplicaChangesResult(
                transactions: transactions, fleetIDs: try store.fleetIDs(of: Array(named)), durable: durable,
                lastTxn: max(lastTxn, durable))
        }
    }

    /// `store.replicaIDs`.
    func replicaIDs(_ params: ReplicaIDsParams) throws(RPCError) -> ReplicaIDsResult {
        let store = try requireReplicatedStore()
        return ReplicaIDsResult(ids: try perform { try store.localIDs(forFleetIDs: params.fleetIDs) })
    }

    /// `store.stats`' `replica` member: `{"gateway","published","applied":{…}}`, `nil` for a store that is not a
    /// fleet member.
    func replicaStatistics() -> JSONValue? {
        guard let state = try? replicatedStore?.replicaState(registering: nil), state.gateway != nil else { return nil }
        return ReplicaStateResult(state).json
    }
}
