import ContextBusObjectGraph

/// Objects as they were after a transaction that later ones have followed: read now, with the changes of the later
/// transactions undone, from the store's history (docs/protocol.md, "Live queries on the wire": a watch's list at
/// each transaction, though the store can only be read as it is now).
///
/// A change set tells everything needed to undo it for the objects it holds: an insert did not exist before, an
/// update's changed keys had its `previousValues` (and its version was one less), a delete's snapshot holds its last
/// values. So an object's state as of transaction `t` is its snapshot before the first change after `t` when there
/// is one, and its current snapshot otherwise. To-many sets the change sets leave out (faults) are told by a
/// `ToManyTimeline` from the members read now.
struct PastSnapshots {
    private let store: any PersistentStore
    /// Snapshots can be told as of this transaction or later.
    let start: Int64
    /// The change sets after `start`, in `txn` order, up to `end`.
    private(set) var changes: [ChangeSet] = []
    private(set) var end: Int64
    private var timeline: ToManyTimeline
    /// Each object's changes after `start`, in `txn` order.
    private var changesByObject: [ObjectID: [(txn: Int64, change: Change)]] = [:]
    /// Snapshots read from the store, with the transaction each read reflects (`nil`: there was no such object).
    private var reads: [ObjectID: (txn: Int64, snapshot: ObjectSnapshot?)] = [:]

    private enum Change {
        case inserted
        case updated(ChangeSet.Update)
        case deleted(ObjectSnapshot)
    }

    var model: Model { store.model }

    /// An empty record that starts after transaction `txn`.
    init(store: any PersistentStore, after txn: Int64) {
        self.store = store
        start = txn
        end = txn
        timeline = ToManyTimeline(model: store.model, after: txn)
    }

    /// Reads the history after `end` up to transaction `txn`.
    ///
    /// - Throws: `StoreError.historyUnavailable` when the history no longer reaches back to `end`, or
    ///   `ToManyTimelineError` when it has a gap.
    mutating func extend(through txn: Int64) throws {
        while end < txn {
            let page = try store.history(since: end, limit: Int(min(txn - end, 1_000)))
            guard !page.isEmpty else { throw ToManyTimelineError.historyEnded(end: end, through: txn) }
            for changes in page where changes.txn <= txn { try record(changes) }
        }
    }

    private mutating func record(_ changes: ChangeSet) throws {
        try timeline.record(changes)
        end = changes.txn
        self.changes.append(changes)
        for snapshot in changes.inserted {
            changesByObject[snapshot.id, default: []].append((changes.txn, .inserted))
        }
        for update in changes.updated {
            changesByObject[update.snapshot.id, default: []].append((changes.txn, .updated(update)))
        }
        for snapshot in changes.deleted {
            changesByObject[snapshot.id, default: []].append((changes.txn, .deleted(snapshot)))
        }
    }

    /// Whether a change set after `txn` (up to `end`) holds the object.
    func changed(_ id: ObjectID, after txn: Int64) -> Bool {
        changesByObject[id]?.contains { $0.txn > txn } ?? false
    }

    /// The snapshots of `ids` as of transaction `txn` (`start` or later, `end` at most), with every to-many value;
    /// an ID with no object then is left out. Reads the store for the objects it must, and the history that read
    /// needs.
    mutating func snapshots(of ids: [ObjectID], asOf txn: Int64) throws -> [ObjectID: ObjectSnapshot] {
        precondition(txn >= start && txn <= end, "as of \(txn), outside \(start)…\(end)")
        var past: [ObjectID: ObjectSnapshot] = [:]
        // Objects unchanged since `txn` (as the store has them now) and objects whose to-many values are faults.
        var incomplete: [ObjectID] = []
        for id in ids {
            guard let entity = store.model.entity(named: id.entity) else { continue }
            switch rewound(id, to: txn) {
            case .some(let snapshot?):
                past[id] = snapshot
                if entity.relationships.contains(where: { $0.isToMany && snapshot.values[$0.name] == nil }) {
                    incomplete.append(id)
                }
            case .some(nil):
                continue
            case nil:
                incomplete.append(id)
            }
        }
        try read(incomplete.filter { reads[$0] == nil })
        for id in incomplete {
            guard let entity = store.model.entity(named: id.entity), let read = reads[id] else { continue }
            var snapshot: ObjectSnapshot
            if let known = past[id] {
                snapshot = known
            } else if let changed = rewound(id, to: txn) {
                // Changed after `txn` by a transaction the read brought into the history.
                guard let changed else { continue }
                snapshot = changed
            } else {
                guard let current = read.snapshot else { continue }
                snapshot = current
            }
            for relationship in entity.relationships where relationship.isToMany {
                guard snapshot.values[relationship.name] == nil else { continue }
                snapshot.values[relationship.name] = .references(
                    try timeline.members(
                        of: id, key: relationship.name, asOf: txn,
                        from: read.snapshot.map { $0.values[relationship.name]?.referencedIDs ?? [] },
                        after: read.txn))
            }
            past[id] = snapshot
        }
        return past
    }

    /// The object as of `txn` told by the first change after it: `nil` when none of the recorded change sets holds
    /// it, `.some(nil)` when it was inserted after `txn`. To-many values the change set left out are missing.
    private func rewound(_ id: ObjectID, to txn: Int64) -> ObjectSnapshot?? {
        switch changesByObject[id]?.first(where: { $0.txn > txn })?.change {
        case .inserted?:
            return .some(nil)
        case .updated(let update)?:
            var snapshot = update.snapshot
            snapshot.version -= 1
            for key in update.changedKeys { snapshot.values[key] = update.previousValues[key] }
            return snapshot
        case .deleted(let snapshot)?:
            return snapshot
        case nil:
            return nil
        }
    }

    /// The snapshot of `id` as of `txn` (`nil`: no such object then).
    mutating func snapshot(of id: ObjectID, asOf txn: Int64) throws -> ObjectSnapshot? {
        try snapshots(of: [id], asOf: txn)[id]
    }

    /// Reads `ids` now, and the history up to the read's transaction.
    private mutating func read(_ ids: [ObjectID]) throws {
        guard !ids.isEmpty else { return }
        let result = try store.objects(with: ids)
        try extend(through: result.txn)
        for snapshot in result.objects { reads[snapshot.id] = (result.txn, snapshot) }
        for id in result.missing { reads[id] = (result.txn, nil) }
    }
}
