import ContextBusSupport
import Foundation
import Synchronization

/// A `PersistentStore` that keeps everything in memory: the same semantics as `SQLiteStore`
/// (validation, versions, merge policies, inverses, delete rules, history), nothing on disk.
///
/// One mutex protects the state; a save plans and applies under it, so saves are serialised
/// (there is nothing to group: no fsync to share). Change sets are delivered to observers on a
/// serial queue, in `txn` order, with no lock held.
public final class InMemoryStore: PersistentStore {
    public let model: Model
    let state: Locked<InMemoryState>
    private let observers = ChangeObservers(label: "ContextBus.InMemoryStore.observers")
    private let lastCommitted = Atomic<Int64>(0)

    /// Makes an empty store for `model`.
    ///
    /// - Parameter historyRetention: how many of the latest transactions `history(since:limit:)`
    ///   can return (at least 1).
    public init(model: Model, historyRetention: Int = 100_000) {
        precondition(historyRetention >= 1, "historyRetention must be at least 1")
        self.model = model
        self.state = Locked(InMemoryState(historyRetention: historyRetention))
    }

    public var lastTransaction: Int64 { lastCommitted.load(ordering: .acquiring) }

    public func save(_ request: SaveRequest) throws -> SaveResult {
        guard request.origin == nil else {
            throw StoreError.invalidRequest(field: "origin", message: "an in-memory store is not a fleet member")
        }
        let now = Date()
        return try state.withLock { state throws -> SaveResult in
            guard !request.isEmpty else { return Self.emptyResult(txn: state.lastTxn, time: now, request: request) }
            let source = InMemorySource(objects: state.objects, counters: state.counters, model: model)
            var planner = ChangeSetPlanner(model: model, source: source)
            let plan = try planner.plan(request)
            state.counters = source.counters
            source.objects = [:]  // drop the shared reference so that applying does not copy the tables
            guard !plan.isEmpty else {
                var result = Self.emptyResult(txn: state.lastTxn, time: now, request: request)
                result.ids = plan.ids
                result.matched = plan.matched
                return result
            }
            state.lastTxn += 1
            let changes = plan.changeSet(txn: state.lastTxn, time: now, author: request.author)
            state.apply(changes, toManyDeltas: plan.toManyDeltas, model: model)
            lastCommitted.store(state.lastTxn, ordering: .releasing)
            observers.publish([changes])
            var result = SaveResult(txn: changes.txn, ids: plan.ids, versions: plan.versions, changes: changes)
            result.matched = plan.matched
            return result
        }
    }

    package static func emptyResult(txn: Int64, time: Date, request: SaveRequest) -> SaveResult {
        SaveResult(
            txn: txn, ids: [:], versions: [:],
            changes: ChangeSet(txn: txn, time: time, author: request.author, inserted: [], updated: [], deleted: []))
    }

    public func obtainPermanentIDs(entity: String, count: Int) throws -> [ObjectID] {
        guard model.entity(named: entity) != nil else {
            throw StoreError.invalidRequest(field: "entity", message: "unknown entity '\(entity)'")
        }
        guard count >= 0 else { throw StoreError.invalidRequest(field: "count", message: "must not be negative") }
        let first = state.withLock { state in
            let first = state.counters[entity, default: 0] + 1
            state.counters[entity, default: 0] += Int64(count)
            return first
        }
        return (0..<Int64(count)).map { ObjectID(entity: entity, number: first + $0) }
    }

    public func objects(with ids: [ObjectID]) throws -> StoreObjectsResult {
        state.withLock { state in
            var result = StoreObjectsResult(txn: state.lastTxn, objects: [], missing: [])
            for id in ids {
                if let number = id.number, let snapshot = state.objects[id.entity]?[number] {
                    result.objects.append(snapshot)
                } else {
                    result.missing.append(id)
                }
            }
            return result
        }
    }

    public func history(since: Int64, limit: Int) throws -> [ChangeSet] {
        guard limit >= 0 else { throw StoreError.invalidRequest(field: "limit", message: "must not be negative") }
        return try state.withLock { state throws(StoreError) in
            let since = max(since, 0)
            guard since < state.lastTxn, limit > 0 else { return [] }
            guard let oldest = state.history.first?.txn, since >= oldest - 1 else {
                throw .historyUnavailable(since: since, oldest: state.history.first?.txn ?? state.lastTxn + 1)
            }
            let start = Int(since - oldest + 1)
            return Array(state.history[start..<min(start + limit, state.history.count)])
        }
    }

    public func observeChanges(_ observer: @escaping @Sendable (ChangeSet) -> Void) -> StoreObservation {
        observers.add(observer)
    }

    /// Waits until every change set committed so far has been delivered to observers.
    public func waitForObservers() {
        observers.waitForDelivery()
    }
}

/// Everything an `InMemoryStore` holds, protected by its mutex.
struct InMemoryState {
    /// Entity → object number → committed snapshot.
    var objects: [String: [Int64: ObjectSnapshot]] = [:]
    /// Entity → the highest object number handed out.
    var counters: [String: Int64] = [:]
    var lastTxn: Int64 = 0
    /// The latest committed change sets, oldest first, consecutive `txn`s.
    var history: [ChangeSet] = []
    let historyRetention: Int

    init(historyRetention: Int) {
        self.historyRetention = historyRetention
    }

    /// Stores a committed change set. An updated snapshot leaves out the to-many relationships
    /// the save did not read in full: their stored members get `toManyDeltas` applied instead.
    mutating func apply(_ changes: ChangeSet, toManyDeltas: [ObjectID: [String: ToManyDelta]], model: Model) {
        for snapshot in changes.inserted { objects[snapshot.id.entity, default: [:]][snapshot.id.number!] = snapshot }
        for update in changes.updated {
            let id = update.snapshot.id
            var snapshot = update.snapshot
            var stored = objects[id.entity]?.removeValue(forKey: id.number!)
            for relationship in model.entity(named: id.entity)?.relationships ?? []
            where relationship.isToMany && snapshot.values[relationship.name] == nil {
                var members = stored?.values.removeValue(forKey: relationship.name)?.referencedIDs ?? []
                if let delta = toManyDeltas[id]?[relationship.name] { members = delta.applied(to: members) }
                snapshot.values[relationship.name] = .references(members)
            }
            stored = nil
            objects[id.entity, default: [:]][id.number!] = snapshot
        }
        for snapshot in changes.deleted { objects[snapshot.id.entity]?[snapshot.id.number!] = nil }
        history.append(changes)
        // Prune in chunks so that appending stays amortised O(1).
        if history.count > historyRetention + max(historyRetention / 8, 1) {
            history.removeFirst(history.count - historyRetention)
        }
    }
}

/// The planner's view of an `InMemoryStore`'s state during one save.
///
/// Only used inside the store's mutex, on the saving thread; not shared.
final class InMemorySource: ChangeSetSource {
    var objects: [String: [Int64: ObjectSnapshot]]
    var counters: [String: Int64]
    let model: Model

    init(objects: [String: [Int64: ObjectSnapshot]], counters: [String: Int64], model: Model) {
        self.objects = objects
        self.counters = counters
        self.model = model
    }

    func snapshot(of id: ObjectID) -> ObjectSnapshot? {
        guard var snapshot = id.number.flatMap({ objects[id.entity]?[$0] }) else { return nil }
        for relationship in model.entity(named: id.entity)?.relationships ?? [] where relationship.isToMany {
            snapshot.values.removeValue(forKey: relationship.name)
        }
        return snapshot
    }

    func members(of id: ObjectID, relationship: RelationshipDescription) -> [ObjectID] {
        id.number.flatMap { objects[id.entity]?[$0]?.values[relationship.name]?.referencedIDs } ?? []
    }

    func allocateNumbers(entity: String, count: Int) -> Int64 {
        let first = counters[entity, default: 0] + 1
        counters[entity, default: 0] += Int64(count)
        return first
    }

    func highestAllocatedNumber(entity: String) -> Int64 {
        counters[entity, default: 0]
    }

    func objectIDs(of entity: String, matching predicate: ObjectPredicate?) throws -> [ObjectID] {
        let objects = self.objects
        let lookup: (ObjectID) -> [String: PropertyValue]? = { id in
            id.number.flatMap { objects[id.entity]?[$0]?.values }
        }
        let evaluator = try predicate.map { (predicate) throws(StoreError) in
            try StorePredicates.evaluator(predicate, entity: entity, model: model)
        }
        return (objects[entity] ?? [:]).values
            .filter { evaluator?.evaluate(values: $0.values, lookup: lookup) ?? true }
            .map(\.id).sorted()
    }

    /// A scan of the entity's objects: the in-memory store keeps no indexes.
    func object(of entity: String, withKey key: [String: PropertyValue]) -> ObjectID? {
        objects[entity]?.values.first { snapshot in key.allSatisfy { snapshot.values[$0.key] == $0.value } }?.id
    }
}
