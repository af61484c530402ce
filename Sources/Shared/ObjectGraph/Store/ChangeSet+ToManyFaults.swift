/// Change sets whose updated snapshots leave out to-many relationships (faults).
///
/// A store does not read a to-many relationship to save a change made from the other side: a
/// reading joining a device updates the device (new version, `readings` in `changedKeys`), but the
/// device's snapshot and `previousValues` hold no `readings` value, so a save stays O(1) however
/// many readings the device has. Every such change can be derived from the change set itself:
/// the other side of each relationship change is an object of the same change set whose values
/// for that key are there (a to-one value, a to-many set the save read in full, an inserted
/// object's sets, a deleted object's last values).
extension ChangeSet {
    /// Whether an updated snapshot leaves out a to-many value (one of its changed keys has none).
    public var hasToManyFaults: Bool {
        updated.contains { update in update.changedKeys.contains { update.snapshot.values[$0] == nil } }
    }

    /// Object → to-many key → members added and removed by this transaction, derived from the
    /// other side of every relationship change the change set holds values for.
    func derivedToManyDeltas(model: Model) -> [ObjectID: [String: ToManyDelta]] {
        var deltas: [ObjectID: [String: ToManyDelta]] = [:]
        func record(
            _ owner: ObjectID, _ relationship: RelationshipDescription, before: [ObjectID], after: [ObjectID]
        ) {
            guard
                let inverse = model.entity(named: relationship.destination)?.relationship(named: relationship.inverse),
                inverse.isToMany, before != after
            else { return }
            let (beforeSet, afterSet) = (Set(before), Set(after))
            for target in afterSet.subtracting(beforeSet) {
                deltas[target, default: [:]][inverse.name, default: ToManyDelta()].added.insert(owner)
            }
            for target in beforeSet.subtracting(afterSet) {
                deltas[target, default: [:]][inverse.name, default: ToManyDelta()].removed.insert(owner)
            }
        }
        for snapshot in inserted {
            guard let entity = model.entity(named: snapshot.id.entity) else { continue }
            for relationship in entity.relationships {
                guard let value = snapshot.values[relationship.name], !value.referencedIDs.isEmpty else { continue }
                record(snapshot.id, relationship, before: [], after: value.referencedIDs)
            }
        }
        for update in updated {
            guard let entity = model.entity(named: update.snapshot.id.entity) else { continue }
            for key in update.changedKeys {
                guard let relationship = entity.relationship(named: key), let after = update.snapshot.values[key],
                    let before = update.previousValues[key]
                else { continue }
                record(update.snapshot.id, relationship, before: before.referencedIDs, after: after.referencedIDs)
            }
        }
        for snapshot in deleted {
            guard let entity = model.entity(named: snapshot.id.entity) else { continue }
            for relationship in entity.relationships {
                guard let value = snapshot.values[relationship.name], !value.referencedIDs.isEmpty else { continue }
                record(snapshot.id, relationship, before: value.referencedIDs, after: [])
            }
        }
        return deltas
    }
}

extension ToManyDelta {
    /// `members` (sorted) with this delta applied, still sorted: O(changes × log n) searches
    /// plus the array moves, no hashing of the members.
    package func applied(to members: [ObjectID]) -> [ObjectID] {
        var members = members
        if !removed.isEmpty { members.removeAll { removed.contains($0) } }
        for member in added.sorted() {
            var (low, high) = (0, members.count)
            while low < high {
                let middle = (low + high) / 2
                if members[middle] < member { low = middle + 1 } else { high = middle }
            }
            if low == members.count || members[low] != member { members.insert(member, at: low) }
        }
        return members
    }
}

extension PersistentStore {
    /// `changes` with every to-many value its updated snapshots leave out filled in with the members as of
    /// `changes.txn`, and as previous value of a changed key those members with the transaction's changes undone.
    ///
    /// For consumers that must show whole sets, such as `storesvc`'s `store.changed` events
    /// (`docs/protocol.md`: a to-many value is an array of IDs). Exact however many transactions have committed
    /// since: the members are read now (`objects(with:)`, which names the transaction `L` it reflects) and the
    /// changes of the transactions after `changes.txn` up to `L`, read from the history, are undone
    /// (`ToManyTimeline`). A caller completing change sets in `txn` order keeps one timeline for all of them
    /// (`completingToManyValues(in:timeline:)`) so that each later change set is read once.
    ///
    /// - Throws: `StoreError.historyUnavailable` when the history no longer reaches back to `changes.txn`
    ///   although later transactions have committed, a `ToManyTimelineError` when the store's answers do not fit
    ///   together, or the store's read error.
    public func completingToManyValues(in changes: ChangeSet) throws -> ChangeSet {
        var timeline = ToManyTimeline(model: model, after: changes.txn)
        return try completingToManyValues(in: changes, timeline: &timeline)
    }

    /// `completingToManyValues(in:)` with the later change sets `timeline` already holds; the ones it lacks are
    /// read from the history into it, and the ones up to `changes.txn` forgotten.
    public func completingToManyValues(in changes: ChangeSet, timeline: inout ToManyTimeline) throws -> ChangeSet {
        timeline.forget(through: changes.txn)
        var incomplete: [ObjectID] = []
        for update in changes.updated {
            guard let entity = model.entity(named: update.snapshot.id.entity) else { continue }
            if entity.relationships.contains(where: { $0.isToMany && update.snapshot.values[$0.name] == nil }) {
                incomplete.append(update.snapshot.id)
            }
        }
        guard !incomplete.isEmpty else { return changes }
        let read = try objects(with: incomplete)
        guard read.txn >= changes.txn else {
            throw ToManyTimelineError.readOlderThanChangeSet(read: read.txn, txn: changes.txn)
        }
        try record(through: read.txn, into: &timeline)
        let current = Dictionary(read.objects.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let deltas = changes.derivedToManyDeltas(model: model)
        var completed = changes
        for index in completed.updated.indices {
            let id = completed.updated[index].snapshot.id
            guard let entity = model.entity(named: id.entity) else { continue }
            for relationship in entity.relationships where relationship.isToMany {
                let key = relationship.name
                guard completed.updated[index].snapshot.values[key] == nil else { continue }
                let members = try timeline.members(
                    of: id, key: key, asOf: changes.txn, from: current[id].map { $0.values[key]?.referencedIDs ?? [] },
                    after: read.txn)
                completed.updated[index].snapshot.values[key] = .references(members)
                guard completed.updated[index].changedKeys.contains(key) else { continue }
                let previous = deltas[id]?[key].map { ToManyDelta(added: $0.removed, removed: $0.added) }
                completed.updated[index].previousValues[key] = .references(previous?.applied(to: members) ?? members)
            }
        }
        return completed
    }

    /// Reads the change sets after `timeline.end` up to `txn` from the history into `timeline`.
    private func record(through txn: Int64, into timeline: inout ToManyTimeline) throws {
        while timeline.end < txn {
            let page = try history(since: timeline.end, limit: Int(min(txn - timeline.end, 256)))
            guard page.first != nil else { throw ToManyTimelineError.historyEnded(end: timeline.end, through: txn) }
            for changes in page where changes.txn <= txn { try timeline.record(changes) }
        }
    }
}
