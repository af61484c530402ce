import ContextBusObjectGraph
import ContextBusServer
import ContextBusSupport
import ContextBusWire
import Dispatch

/// The live queries of `store.watch`: each watch's ordered list, kept current from the committed change sets, and
/// one `store.results` event per transaction that changes it (docs/protocol.md, "Live queries on the wire").
///
/// A watch's list is computed from each change set in memory when it can be (no limit or offset, sort keys and
/// predicate on the entity's own attributes, an entity without to-many relationships: the change set then holds
/// every value that decides membership and order), by editing it in place (`WatchedList`: a binary search per
/// changed object); otherwise the list is fetched again and compared with the last (`WatchDiff`), and an event describes
/// the list as of the fetch's transaction (under load that may be a later transaction than the change set's,
/// whose own change then arrives in that event: the list is never wrong, and events stay in `txn` order). Change
/// sets are handled on one serial queue, in `txn` order; a watch registered while its first fetch runs keeps the
/// change sets that arrive meanwhile and applies those after the fetch's transaction.
final class WatchHub: Sendable {
    private struct Watch {
        let connection: any SubscriberConnection
        let request: FetchRequest
        /// Whether change sets can be applied in memory (see the type's notes).
        let isComputedInMemory: Bool
        /// The request's predicate, bound, for the in-memory path (`nil` without a predicate).
        let evaluator: PredicateEvaluator?
        /// The entities whose changes can alter the list.
        let relevantEntities: Set<String>
        var list: WatchedList
        /// The transaction `objects` reflect; `nil` until the first fetch's answer is sent.
        var txn: Int64?
        var pending: [ChangeSet] = []
    }

    private struct State {
        var watches: [Int64: Watch] = [:]
        var nextID: Int64 = 0
    }

    private let store: any PersistentStore
    private let log: ServiceLog
    private let queue = DispatchQueue(label: "storesvc.watches")
    private let state = Locked(State())
    private let observation = Locked<StoreObservation?>(nil)

    init(store: any PersistentStore, log: ServiceLog) {
        self.store = store
        self.log = log
        let observation = store.observeChanges { [weak self] changes in
            guard let self else { return }
            self.queue.async { self.deliver(changes) }
        }
        self.observation.withLock { $0 = observation }
    }

    /// The number of watches.
    var count: Int { state.withLock { $0.watches.count } }

    /// Stops following the store.
    func stop() {
        observation.withLock { $0 = nil }
    }

    /// `store.watch`: registers the watch and fetches its list. The caller sends the result, then calls
    /// `activate(_:)` so that no event can precede it.
    func watch(_ params: FetchParams, connection: any SubscriberConnection) throws(RPCError) -> StoreWatchResult {
        var request = try params.fetchRequest()
        request.resultType = .objects
        let model = store.model
        guard let entity = model.entity(named: request.entity) else {
            throw .invalidParams(field: "entity", message: "unknown entity '\(request.entity)'")
        }
        let ownKeysOnly = request.sortDescriptors.allSatisfy { $0.keyPath.count == 1 }
        let evaluator = try? request.predicate.map { (predicate) throws(ObjectPredicateError) in
            try PredicateEvaluator(predicate.binding(request.arguments), entity: request.entity, in: model)
        }
        let inMemory =
            request.fetchOffset == 0 && ownKeysOnly
            && entity.relationships.allSatisfy { !$0.isToMany } && (request.predicate == nil || evaluator != nil)
        let id = state.withLock { state -> Int64 in
            state.nextID += 1
            state.watches[state.nextID] = Watch(
                connection: connection, request: request, isComputedInMemory: inMemory, evaluator: evaluator,
                relevantEntities: request.entitiesAffectingResult(in: model),
                list: WatchedList(objects: [], sortDescriptors: request.sortDescriptors, limit: request.fetchLimit))
            return state.nextID
        }
        do {
            let result = try store.fetch(request)
            guard case .objects(let objects) = result.content else { throw StoreError.unavailable("no objects") }
            let list = WatchedList(
                objects: objects, sortDescriptors: request.sortDescriptors, limit: request.fetchLimit)
            state.withLock { state in
                state.watches[id]?.list = list
                state.watches[id]?.pending.removeAll { $0.txn <= result.txn }
            }
            return StoreWatchResult(watch: id, txn: result.txn, objects: objects)
        } catch {
            _ = state.withLock { $0.watches.removeValue(forKey: id) }
            throw StoreErrorMapping.rpcError(for: error, log: log)
        }
    }

    /// Starts the events of a watch whose result has been sent.
    func activate(_ result: StoreWatchResult) {
        queue.async { [self] in
            let pending = state.withLock { state -> [ChangeSet] in
                guard state.watches[result.watch] != nil else { return [] }
                state.watches[result.watch]?.txn = result.txn
                defer { state.watches[result.watch]?.pending = [] }
                return state.watches[result.watch]?.pending ?? []
            }
            for changes in pending {
                var fetches = FetchesOfOneTransaction()
                process(changes, watch: result.watch, fetches: &fetches)
            }
        }
    }

    /// `store.unwatch`.
    ///
    /// - Throws: `404` when the connection has no such watch.
    func unwatch(_ id: Int64, connectionID: UInt64) throws(RPCError) {
        let removed = state.withLock { state -> Bool in
            guard state.watches[id]?.connection.connectionID == connectionID else { return false }
            state.watches.removeValue(forKey: id)
            return true
        }
        guard removed else { throw .notFound("no watch \(id) on this connection") }
    }

    /// Forgets the watches of a connection that closed.
    func connectionClosed(_ connectionID: UInt64) {
        state.withLock { state in
            state.watches = state.watches.filter { $0.value.connection.connectionID != connectionID }
        }
    }

    // MARK: - Change sets

    private func deliver(_ changes: ChangeSet) {
        let ids = state.withLock { state -> [Int64] in
            var active: [Int64] = []
            for (id, watch) in state.watches {
                if watch.txn == nil {
                    state.watches[id]?.pending.append(changes)
                } else {
                    active.append(id)
                }
            }
            return active.sorted()
        }
        var fetches = FetchesOfOneTransaction()
        for id in ids { process(changes, watch: id, fetches: &fetches) }
    }

    /// The lists fetched while one change set is handled: watches of the same request share one fetch.
    private struct FetchesOfOneTransaction {
        var results: [FetchRequest: StoreFetchResult] = [:]
    }

    /// Brings one watch up to date with `changes` and sends the event, if the list changed. On `queue`.
    private func process(_ changes: ChangeSet, watch id: Int64, fetches: inout FetchesOfOneTransaction) {
        // The list leaves the state while it is edited, so that the edit does not copy it.
        guard
            var watch = state.withLock({ state -> Watch? in
                guard let watch = state.watches[id], watch.txn != nil else { return nil }
                state.watches[id]?.list = WatchedList(objects: [], sortDescriptors: [])
                return watch
            })
        else { return }
        var list = watch.list
        watch.list = WatchedList(objects: [], sortDescriptors: [])
        defer { state.withLock { $0.watches[id]?.list = list } }
        guard let txn = watch.txn, changes.txn > txn else { return }
        let touches =
            changes.inserted.contains { watch.relevantEntities.contains($0.id.entity) }
            || changes.updated.contains { watch.relevantEntities.contains($0.snapshot.id.entity) }
            || changes.deleted.contains { watch.relevantEntities.contains($0.id.entity) }
        guard touches else {
            state.withLock { $0.watches[id]?.txn = changes.txn }
            return
        }
        let event: ResultsEvent?
        if watch.isComputedInMemory, list.isInOrder, let touched = Self.touched(by: changes, in: watch),
            let edit = list.apply(touched)
        {
            state.withLock { $0.watches[id]?.txn = changes.txn }
            event =
                edit.isEmpty
                ? nil
                : ResultsEvent(
                    watch: id, txn: changes.txn, removed: edit.removed, inserted: edit.inserted, updated: edit.updated)
        } else {
            let result: StoreFetchResult
            if let shared = fetches.results[watch.request] {
                result = shared
            } else {
                do {
                    result = try store.fetch(watch.request)
                } catch {
                    log.error("store.watch \(id): \(error)")
                    return
                }
                fetches.results[watch.request] = result
            }
            guard case .objects(let objects) = result.content else { return }
            event = WatchDiff.event(watch: id, txn: result.txn, from: list.objects, to: objects)
            list = WatchedList(
                objects: objects, sortDescriptors: watch.request.sortDescriptors, limit: watch.request.fetchLimit)
            state.withLock { $0.watches[id]?.txn = result.txn }
        }
        guard let event else { return }
        if !watch.connection.send(RPCEvent(event)) {
            // The connection closed or overflowed (it was told with bus.overflow): the watch ends with it.
            _ = state.withLock { $0.watches.removeValue(forKey: id) }
        }
    }

    /// What `changes` did to the watched entity's objects, each with its snapshot after the transaction when it
    /// matches the predicate (`nil` when deleted or not matching); `nil` when the predicate looks through a
    /// relationship (the list is then fetched).
    private static func touched(by changes: ChangeSet, in watch: Watch) -> [(id: ObjectID, snapshot: ObjectSnapshot?)]?
    {
        let entity = watch.request.entity
        var lookedThrough = false
        let lookup: (ObjectID) -> [String: PropertyValue]? = { _ in
            lookedThrough = true
            return nil
        }
        var touched: [(id: ObjectID, snapshot: ObjectSnapshot?)] = []
        var seen: [ObjectID: Int] = [:]
        func note(_ id: ObjectID, _ snapshot: ObjectSnapshot?) {
            if let position = seen[id] {
                touched[position].snapshot = snapshot
            } else {
                seen[id] = touched.count
                touched.append((id, snapshot))
            }
        }
        for snapshot in changes.deleted where snapshot.id.entity == entity { note(snapshot.id, nil) }
        for snapshot in changes.inserted where snapshot.id.entity == entity {
            note(
                snapshot.id, watch.evaluator?.evaluate(values: snapshot.values, lookup: lookup) ?? true ? snapshot : nil
            )
        }
        for change in changes.updated where change.snapshot.id.entity == entity {
            let snapshot = change.snapshot
            note(
                snapshot.id, watch.evaluator?.evaluate(values: snapshot.values, lookup: lookup) ?? true ? snapshot : nil
            )
        }
        return lookedThrough ? nil : touched
    }
}
