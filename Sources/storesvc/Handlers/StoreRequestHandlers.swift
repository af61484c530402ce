import ContextBusObjectGraph
import ContextBusSQLite
import ContextBusServer
import ContextBusSupport
import ContextBusWire
import Dispatch

/// The `store.*` methods of `docs/protocol.md`, as plain functions of typed params.
///
/// Transport-free: the bus server calls these off its event loops and sends what they return
/// (or throw). Reads run on the calling thread against the store's read pool. `save` never
/// blocks: it queues the change set for the writer's next group commit in the order it is
/// called and answers through its completion, so a connection's saves are applied in the order
/// they were received as long as the caller calls `save` in that order.
final class StoreRequestHandlers: Sendable {
    /// A store that can answer reads without reading to-many sets (`"toMany":"faults"`).
    let store: any ToManyFaultingStore
    let hub: SubscriptionHub
    let log: ServiceLog
    /// The most transactions `store.history` returns when the request names no `limit` (and the
    /// most it returns at all).
    let historyPageLimit: Int
    private let counters = Locked(Counters())
    private let inFlightSaves = DispatchGroup()

    private struct Counters {
        var saves: Int64 = 0
        var failedSaves: Int64 = 0
        var inFlight: Int64 = 0
    }

    /// The `--retain` rules, whose statistics `store.stats` reports; `nil` without any.
    let retention: RetentionSweeper?
    /// The models the database was made with before, oldest first (`store.model`'s `previousVersions`).
    let previousModelVersions: [String]

    init(
        store: any ToManyFaultingStore, hub: SubscriptionHub, log: ServiceLog, historyPageLimit: Int = 1000,
        retention: RetentionSweeper? = nil, previousModelVersions: [String] = []
    ) {
        self.store = store
        self.hub = hub
        self.log = log
        self.retention = retention
        self.historyPageLimit = historyPageLimit
        self.previousModelVersions = previousModelVersions
    }

    // MARK: - Reads

    /// `store.model`.
    func model() -> ModelResult {
        ModelResult(model: store.model, previousVersions: previousModelVersions)
    }

    /// `store.fetch`; with `"toMany":"faults"`, objects without their to-many values (never read).
    func fetch(_ params: FetchParams) throws(RPCError) -> StoreFetchResult {
        let request = try params.fetchRequest()
        if params.toMany == .faults { return try perform { try store.fetchLeavingOutToMany(request) } }
        return try perform { try store.fetch(request) }
    }

    /// `store.get`; with `"toMany":"faults"`, objects without their to-many values (never read).
    func get(_ params: GetParams) throws(RPCError) -> StoreObjectsResult {
        if params.toMany == .faults {
            return try perform { try store.objectsLeavingOutToMany(with: params.ids) }
        }
        return try perform { try store.objects(with: params.ids) }
    }

    /// `store.aggregate`: computed in one SQL query on a read connection.
    func aggregate(_ request: AggregateRequest) throws(RPCError) -> AggregateResult {
        try perform { try store.aggregate(request) }
    }

    /// `store.history`: transactions after `since`, oldest first, at most `limit` (default and
    /// cap `historyPageLimit`).
    func history(_ params: HistoryParams) throws(RPCError) -> HistoryResult {
        let limit = min(params.limit ?? historyPageLimit, historyPageLimit)
        let changes = try perform { try store.history(since: params.since, limit: limit) }
        return HistoryResult(
            transactions: changes.map { change in
                HistoryTransaction(
                    txn: change.txn, time: change.time, author: change.author, inserted: change.inserted.map(\.id),
                    updated: change.updated.map(\.snapshot.id), deleted: change.deleted.map(\.id))
            })
    }

    // MARK: - Subscriptions

    /// `store.subscribe`: registers the subscription; the caller sends the result, then calls
    /// `hub.activate(result.subscription)` so that no event can precede the result.
    func subscribe(_ params: SubscribeParams, connection: any SubscriberConnection) throws(RPCError) -> SubscribeResult
    {
        try hub.subscribe(params, connection: connection)
    }

    /// `store.unsubscribe`.
    func unsubscribe(_ params: UnsubscribeParams, connectionID: UInt64) throws(RPCError) -> EmptyObject {
        try hub.unsubscribe(params.subscription, connectionID: connectionID)
        return EmptyObject()
    }

    // MARK: - Saving

    /// `store.save`: queues the change set (read with the model by the server), and answers through
    /// `completion` once it is committed (durably for `durability: "disk"`) or failed, with the committed change
    /// set when the request asked for it (`"changes": true`).
    ///
    /// `completion` runs on the store's writer thread (`PersistentStore.save(_:completion:)`): it must only hand
    /// the answer off, as storesvc's handler does to the connection's event loop.
    func save(_ request: SaveRequest, completion: @escaping @Sendable (Result<SaveResult, RPCError>) -> Void) {
        inFlightSaves.enter()
        counters.withLock { $0.inFlight += 1 }
        let log = self.log
        let includesChanges = request.includesChangesInAnswer
        store.save(request) { [self] outcome in
            let response = outcome.map { result in
                var result = result
                if !includesChanges { result.changes = nil }
                return result
            }.mapError { StoreErrorMapping.rpcError(for: $0, log: log) }
            count(failed: (try? response.get()) == nil)
            completion(response)
            counters.withLock { $0.inFlight -= 1 }
            inFlightSaves.leave()
        }
    }

    /// `store.batch`: queues the batch for the writer like a save (it runs as a save of the objects it matches), and
    /// answers through `completion` on the writer's thread once it is committed or failed.
    func batch(_ request: BatchRequest, completion: @escaping @Sendable (Result<BatchResult, RPCError>) -> Void) {
        inFlightSaves.enter()
        counters.withLock { $0.inFlight += 1 }
        let log = self.log
        store.batch(request) { [self] outcome in
            let response = outcome.mapError { StoreErrorMapping.rpcError(for: $0, log: log) }
            count(failed: (try? response.get()) == nil)
            completion(response)
            counters.withLock { $0.inFlight -= 1 }
            inFlightSaves.leave()
        }
    }

    /// Waits until every save queued so far has been answered (shutdown).
    func waitForSaves() {
        inFlightSaves.wait()
    }

    private func count(failed: Bool) {
        counters.withLock { counters in
            counters.saves += 1
            if failed { counters.failedSaves += 1 }
        }
    }

    // MARK: - Statistics

    /// `store.stats`, with `connections` counted by the server.
    func stats(connections: Int) -> StatsResult {
        let counters = self.counters.withLock { $0 }
        let hubCounters = hub.counters
        let storeCounters = store.counters
        let commits = storeCounters.commits ?? (counters.saves - counters.failedSaves)
        var other: [String: JSONValue] = [
            "failedSaves": .int(counters.failedSaves), "inFlightSaves": .int(counters.inFlight),
            "eventsSent": .int(hubCounters.eventsSent), "subscribersDropped": .int(hubCounters.subscribersDropped),
            "lastTxn": .int(store.lastTransaction),
        ]
        for (name, value) in storeCounters.named { other[name] = .int(value) }
        if let retention, !retention.rules.isEmpty { other["retention"] = retention.statisticsJSON }
        if let replica = replicaStatistics() { other["replica"] = replica }
        let range = historyRange()
        return StatsResult(
            connections: Int64(connections), subscriptions: Int64(hub.count), commits: commits,
            saves: counters.saves, groupSizes: storeCounters.groupSizes, historyOldest: range?.oldest,
            historyNewest: range?.newest, other: other)
    }

    /// The transactions the history still holds, `nil` when it is empty.
    private func historyRange() -> (oldest: Int64, newest: Int64)? {
        let newest = store.lastTransaction
        guard newest > 0 else { return nil }
        do {
            guard let first = try store.history(since: 0, limit: 1).first else { return nil }
            return (first.txn, newest)
        } catch StoreError.historyUnavailable(_, let oldest) {
            return oldest <= newest ? (oldest, newest) : nil
        } catch {
            return nil
        }
    }

    // MARK: - Helpers

    func perform<T>(_ body: () throws -> T) throws(RPCError) -> T {
        do {
            return try body()
        } catch {
            throw StoreErrorMapping.rpcError(for: error, log: log)
        }
    }
}
