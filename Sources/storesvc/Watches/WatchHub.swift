import ContextBusObjectGraph
import ContextBusServer
import ContextBusSupport
import ContextBusWire
import Dispatch

/// The live queries of `store.watch`: each watch's ordered list, kept current from the committed change sets, and
/// one `store.results` event per transaction that changes it, at that transaction (docs/protocol.md, "Live queries
/// on the wire").
///
/// A watch whose list the watched objects' own values decide (no offset, `where` and `sort` on the entity's own
/// keys) is edited in place by each change set (`WatchedList`: a binary search per changed object), its objects'
/// to-many values kept by the change set's to-many changes; a window while no object leaves it. Any other list, and
/// a window an object leaves, is the list as of the change set's transaction (`WatchQuery.list(asOf:)`): fetched
/// now, with the transactions committed since undone from the history, so that a list fetched under load, at a
/// later transaction, still gives each transaction its own event. Fetches are kept per request and serve the next
/// transactions up to theirs. Change sets are handled on one serial queue, in `txn` order; a watch registered while
/// its first fetch runs keeps the change sets that arrive meanwhile and applies those after the fetch's transaction.
final class WatchHub: Sendable {
    private struct Watch {
        let connection: any SubscriberConnection
        let query: WatchQuery
        /// Whether change sets are applied to the list in memory (see the type's notes).
        let isEditedInPlace: Bool
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
        /// The last list fetched for each request, while it can serve later transactions (used on `queue`).
        var fetched: [FetchRequest: FetchedWatchList] = [:]
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
        let query: WatchQuery
        do {
            query = try WatchQuery(request, entity: entity, model: model)
        } catch {
            // The store's fetch names what does not fit.
            do { _ = try store.fetch(request) } catch { throw StoreErrorMapping.rpcError(for: error, log: log) }
            throw .invalidParams(field: "where", message: "\(error)")
        }
        let id = state.withLock { state -> Int64 in
            state.nextID += 1
            state.watches[state.nextID] = Watch(
                connection: connection, query: query,
                isEditedInPlace: request.fetchOffset == 0 && query.readsOwnKeysOnly,
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
            for changes in pending { process(changes, watch: result.watch) }
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
            // A fetch older than this transaction serves no later one.
            state.fetched = state.fetched.filter { $0.value.txn >= changes.txn }
            return active.sorted()
        }
        for id in ids { process(changes, watch: id) }
    }

    /// Brings one watch up to date with `changes` and sends the event, if the list changed. On `queue`.
    private func process(_ changes: ChangeSet, watch id: Int64) {
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
        state.withLock { $0.watches[id]?.txn = changes.txn }
        guard touches else { return }
        var edit: WatchedList.Edit?
        if watch.isEditedInPlace, list.isInOrder {
            do {
                if let touched = try touched(by: changes, in: watch, list: list) { edit = list.apply(touched) }
            } catch {
                log.error("store.watch \(id): txn \(changes.txn): \(error)")
            }
        }
        let event: ResultsEvent?
        if let edit {
            event =
                edit.isEmpty
                ? nil
                : ResultsEvent(
                    watch: id, txn: changes.txn, removed: edit.removed, inserted: edit.inserted, updated: edit.updated)
        } else {
            let request = watch.query.request
            var fetched = state.withLock { $0.fetched.removeValue(forKey: request) }
            var objects: [ObjectSnapshot]
            var eventTxn = changes.txn
            do {
                objects = try watch.query.list(asOf: changes.txn, store: store, fetched: &fetched)
                state.withLock { $0.fetched[request] = fetched }
            } catch {
                // The history no longer reaches back to the transaction (`--history`), or a read failed: the list as
                // it is now stands for the transactions up to its own, the best the watch can do.
                log.error("store.watch \(id): the list as of txn \(changes.txn): \(error)")
                do {
                    let result = try store.fetch(request)
                    guard case .objects(let current) = result.content else { return }
                    (objects, eventTxn) = (current, result.txn)
                } catch {
                    log.error("store.watch \(id): \(error)")
                    return
                }
                state.withLock { $0.watches[id]?.txn = eventTxn }
            }
            event = WatchDiff.event(watch: id, txn: eventTxn, from: list.objects, to: objects)
            list = WatchedList(objects: objects, sortDescriptors: request.sortDescriptors, limit: request.fetchLimit)
        }
        guard let event else { return }
        if !watch.connection.send(RPCEvent(event)) {
            // The connection closed or overflowed (it was told with bus.overflow): the watch ends with it.
            _ = state.withLock { $0.watches.removeValue(forKey: id) }
        }
    }

    /// What `changes` did to the watched entity's objects, each with its snapshot after the transaction, with every
    /// to-many value, when it matches the predicate (`nil` when deleted or not matching); `nil` when the predicate
    /// looked through a relationship after all (the list is then told as of the transaction).
    ///
    /// An updated snapshot leaves out the to-many sets the transaction changed from the other side (faults): a listed
    /// object's are its listed members with the transaction's to-many changes applied; any other object's are read
    /// as of the transaction (`PastSnapshots`).
    private func touched(
        by changes: ChangeSet, in watch: Watch, list: WatchedList
    ) throws -> [(id: ObjectID, snapshot: ObjectSnapshot?)]? {
        let entity = watch.query.entity
        let toManyKeys = entity.relationships.filter(\.isToMany).map(\.name)
        var toManyChanges: [ObjectID: [String: ToManyChange]]?
        var unlisted: [ObjectID] = []
        var snapshots: [ObjectID: ObjectSnapshot] = [:]
        for update in changes.updated where update.snapshot.id.entity == entity.name {
            var snapshot = update.snapshot
            let faults = toManyKeys.filter { snapshot.values[$0] == nil }
            if !faults.isEmpty {
                guard let listed = list.member(snapshot.id) else {
                    unlisted.append(snapshot.id)
                    continue
                }
                if toManyChanges == nil { toManyChanges = changes.toManyChanges(model: store.model) }
                for key in faults {
                    let members = listed.values[key]?.referencedIDs ?? []
                    guard let change = toManyChanges?[snapshot.id]?[key] else {
                        snapshot.values[key] = .references(members)
                        continue
                    }
                    // A binary search per member that joined: not a sort of the device's every reading.
                    let delta = ToManyDelta(added: Set(change.added), removed: Set(change.removed))
                    snapshot.values[key] = .references(delta.applied(to: members))
                }
            }
            snapshots[snapshot.id] = snapshot
        }
        for snapshot in changes.inserted
        where snapshot.id.entity == entity.name && toManyKeys.contains(where: { snapshot.values[$0] == nil }) {
            unlisted.append(snapshot.id)
        }
        if !unlisted.isEmpty {
            var past = PastSnapshots(store: store, after: changes.txn)
            for (id, snapshot) in try past.snapshots(of: unlisted, asOf: changes.txn) { snapshots[id] = snapshot }
        }
        var lookedThrough = false
        func lookup(_: ObjectID) -> [String: PropertyValue]? {
            lookedThrough = true
            return nil
        }
        var touched: [(id: ObjectID, snapshot: ObjectSnapshot?)] = []
        var seen: [ObjectID: Int] = [:]
        func note(_ id: ObjectID, _ snapshot: ObjectSnapshot?) {
            let matching = snapshot.flatMap { watch.query.matches($0.values, lookup: lookup) ? $0 : nil }
            if let position = seen[id] {
                touched[position].snapshot = matching
            } else {
                seen[id] = touched.count
                touched.append((id, matching))
            }
        }
        for snapshot in changes.deleted where snapshot.id.entity == entity.name { note(snapshot.id, nil) }
        for snapshot in changes.inserted where snapshot.id.entity == entity.name {
            note(snapshot.id, snapshots[snapshot.id] ?? snapshot)
        }
        for update in changes.updated where update.snapshot.id.entity == entity.name {
            note(update.snapshot.id, snapshots[update.snapshot.id])
        }
        return lookedThrough ? nil : touched
    }
}
