/// The to-many changes of a run of consecutive committed transactions, to tell an object's to-many members as of
/// a transaction older than the store's current state.
///
/// A store keeps no past versions of its rows (and the system SQLite has no `sqlite3_snapshot_*` to read one), but
/// every change set says how it changed each to-many set: `ChangeSet.toManyChanges(model:)` for updated objects,
/// and a deleted object's snapshot carries its whole sets (its delete rules read them). So the members read in
/// the state after transaction `L` (`objects(with:)` names `L`), with the changes of `L`, `L−1`, …, `T+1` undone,
/// are exactly the members as of transaction `T`. `PersistentStore.completingToManyValues(in:timeline:)` reads
/// the change sets it needs from the store's history into a timeline; keeping the timeline between calls (one
/// caller, change sets in `txn` order, as `storesvc`'s subscription hub has them) reads each one once.
public struct ToManyTimeline: Sendable {
    /// What one transaction did to one to-many key of one object.
    enum Step: Sendable, Hashable {
        /// Members joined and left.
        case changed(ToManyChange)
        /// The object was deleted; its members just before (`nil`: the deleted snapshot did not hold them).
        case deleted(membersBefore: [ObjectID]?)
    }

    struct Entry: Sendable, Hashable {
        let txn: Int64
        let key: String
        let step: Step
    }

    /// One object's recorded steps, in `txn` order from `head` (the ones before are forgotten).
    struct Steps: Sendable {
        var entries: [Entry] = []
        var head = 0
        var live: ArraySlice<Entry> { entries[head...] }

        /// Forgets the steps up to `txn`; `false` when none is left.
        mutating func forget(through txn: Int64) -> Bool {
            while head < entries.count, entries[head].txn <= txn { head += 1 }
            guard head < entries.count else { return false }
            if head > 32, head * 2 > entries.count {
                entries.removeFirst(head)
                head = 0
            }
            return true
        }
    }

    let model: Model
    /// Every transaction after this one up to `end` is recorded: members can be told as of `start` or later.
    private(set) var start: Int64
    /// The last recorded transaction.
    private(set) var end: Int64
    /// Object → its recorded steps.
    private var steps: [ObjectID: Steps] = [:]
    /// The objects each recorded transaction has steps for, in `txn` order from `touchedStart` (for `forget`).
    private var touched: [(txn: Int64, objects: [ObjectID])] = []
    private var touchedStart = 0

    /// An empty timeline that starts after transaction `txn`.
    public init(model: Model, after txn: Int64 = 0) {
        self.model = model
        start = txn
        end = txn
    }

    /// The number of recorded steps (tests).
    var stepCount: Int { steps.values.reduce(0) { $0 + $1.live.count } }

    /// Records the transaction after `end`.
    ///
    /// - Throws: `ToManyTimelineError.notRecordedInOrder` when `changes` is not the transaction after `end`.
    package mutating func record(_ changes: ChangeSet) throws(ToManyTimelineError) {
        guard changes.txn == end + 1 else { throw .notRecordedInOrder(end: end, txn: changes.txn) }
        end = changes.txn
        var objects: [ObjectID] = []
        func add(_ id: ObjectID, _ key: String, _ step: Step) {
            steps[id, default: Steps()].entries.append(Entry(txn: changes.txn, key: key, step: step))
            if objects.last != id { objects.append(id) }
        }
        if !changes.updated.isEmpty {
            for (id, keys) in changes.toManyChanges(model: model) {
                for (key, change) in keys where !change.isEmpty { add(id, key, .changed(change)) }
            }
        }
        for snapshot in changes.deleted {
            guard let entity = model.entity(named: snapshot.id.entity) else { continue }
            for relationship in entity.relationships where relationship.isToMany {
                add(
                    snapshot.id, relationship.name,
                    .deleted(membersBefore: snapshot.values[relationship.name]?.referencedIDs))
            }
        }
        if !objects.isEmpty { touched.append((changes.txn, objects)) }
    }

    /// Forgets the transactions up to `txn`: members can then be told as of `txn` or later. A timeline that ends
    /// before `txn` becomes an empty one starting after `txn`.
    mutating func forget(through txn: Int64) {
        guard txn > start else { return }
        guard txn < end else {
            self = ToManyTimeline(model: model, after: txn)
            return
        }
        start = txn
        while touchedStart < touched.count, touched[touchedStart].txn <= txn {
            for id in touched[touchedStart].objects where steps[id]?.forget(through: txn) == false {
                steps[id] = nil
            }
            touchedStart += 1
        }
        if touchedStart > 64, touchedStart * 2 > touched.count {
            touched.removeFirst(touchedStart)
            touchedStart = 0
        }
    }

    /// The members of `id`'s to-many `key` as of transaction `txn`, from `current`: its members in the state
    /// after transaction `currentTxn` (`nil`: the object did not exist then).
    ///
    /// The later steps are undone as one net change (members taken out, members put back) applied once
    /// (`ToManyDelta.applied(to:)`), however many transactions are undone.
    ///
    /// - Throws: `ToManyTimelineError.notRecorded` when the timeline does not hold every transaction after `txn` up
    ///   to `currentTxn`; `.membersUnknown` when the object is gone and no recorded deletion tells its members.
    package func members(
        of id: ObjectID, key: String, asOf txn: Int64, from current: [ObjectID]?, after currentTxn: Int64
    ) throws(ToManyTimelineError) -> [ObjectID] {
        guard txn >= start, currentTxn <= end, txn <= currentTxn else {
            throw .notRecorded(start: start, end: end, txn: txn, through: currentTxn)
        }
        // The members as of `txn` are (base − undo.removed) ∪ undo.added.
        var base = current
        var undo = ToManyDelta()
        for entry in (steps[id]?.live ?? []).reversed() {
            guard entry.txn > txn else { break }
            guard entry.key == key, entry.txn <= currentTxn else { continue }
            switch entry.step {
            case .changed(let change):
                guard base != nil else { throw .membersUnknown(id, key: key, txn: txn) }
                // Undoing it takes out what it added and puts back what it removed.
                for member in change.added {
                    undo.removed.insert(member)
                    undo.added.remove(member)
                }
                undo.added.formUnion(change.removed)
            case .deleted(let before):
                (base, undo) = (before, ToManyDelta())
            }
        }
        guard let base else { throw .membersUnknown(id, key: key, txn: txn) }
        return undo.isEmpty ? base : undo.applied(to: base)
    }
}

/// Why a `ToManyTimeline` cannot tell a to-many set as of a transaction.
public enum ToManyTimelineError: Error, Hashable, CustomStringConvertible {
    /// A change set was recorded out of order: the timeline ended at `end`.
    case notRecordedInOrder(end: Int64, txn: Int64)
    /// The timeline holds the transactions after `start` up to `end`, not every one after `txn` up to `through`.
    case notRecorded(start: Int64, end: Int64, txn: Int64, through: Int64)
    /// The store's read reflects transaction `read`, older than the change set's `txn`.
    case readOlderThanChangeSet(read: Int64, txn: Int64)
    /// The store's history ended at `end`, before transaction `through` its read reflects.
    case historyEnded(end: Int64, through: Int64)
    /// The object does not exist now and no recorded deletion tells its members as of `txn`.
    case membersUnknown(ObjectID, key: String, txn: Int64)

    public var description: String {
        switch self {
        case .notRecordedInOrder(let end, let txn):
            return "to-many timeline: transaction \(txn) recorded after \(end) (not the next one)"
        case .notRecorded(let start, let end, let txn, let through):
            return
                "to-many timeline: holds transactions \(start + 1)…\(end), not every one from \(txn + 1) to \(through)"
        case .readOlderThanChangeSet(let read, let txn):
            return "to-many values: the store's read reflects transaction \(read), older than the change set's \(txn)"
        case .historyEnded(let end, let through):
            return "to-many values: the store's history ends at transaction \(end), before \(through)"
        case .membersUnknown(let id, let key, let txn):
            return
                "to-many values: the members of \(id).\(key) as of transaction \(txn) are unknown (the object is gone)"
        }
    }
}
