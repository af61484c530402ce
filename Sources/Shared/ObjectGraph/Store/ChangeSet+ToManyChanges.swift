/// The members one transaction added to and removed from one object's to-many relationship.
///
/// What `storesvc` sends for a changed to-many key to a subscriber that asked for changes instead of whole
/// arrays (`store.subscribe` `"toMany":"changes"`, an addition to the design contract, in `docs/protocol.md`).
public struct ToManyChange: Sendable, Hashable {
    /// Members that joined the relationship, sorted.
    public var added: [ObjectID]
    /// Members that left it, sorted.
    public var removed: [ObjectID]

    public init(added: [ObjectID] = [], removed: [ObjectID] = []) {
        self.added = added
        self.removed = removed
    }

    /// Whether nothing joined or left.
    public var isEmpty: Bool { added.isEmpty && removed.isEmpty }
}

extension ChangeSet {
    /// Updated object → changed to-many key → the members this transaction added and removed, for every
    /// changed to-many key of every updated object.
    ///
    /// Read from the change set alone, never from a store: a key whose values the updated snapshot holds before
    /// and after (a save that set the whole set) is the difference of the two; a key the snapshot leaves out (a
    /// fault: the change came from the other side) is derived from the other side of the relationship, an
    /// object of the same change set (`derivedToManyDeltas`). A changed key whose members are known on neither
    /// side gets an empty change (the transaction changed the key and the set came out the same).
    public func toManyChanges(model: Model) -> [ObjectID: [String: ToManyChange]] {
        var derived: [ObjectID: [String: ToManyDelta]]?
        var changes: [ObjectID: [String: ToManyChange]] = [:]
        for update in updated {
            let id = update.snapshot.id
            guard let entity = model.entity(named: id.entity) else { continue }
            for key in update.changedKeys {
                guard let relationship = entity.relationship(named: key), relationship.isToMany else { continue }
                if let after = update.snapshot.values[key], let before = update.previousValues[key] {
                    let (afterSet, beforeSet) = (Set(after.referencedIDs), Set(before.referencedIDs))
                    changes[id, default: [:]][key] = ToManyChange(
                        added: afterSet.subtracting(beforeSet).sorted(),
                        removed: beforeSet.subtracting(afterSet).sorted())
                } else {
                    if derived == nil { derived = derivedToManyDeltas(model: model) }
                    let delta = derived?[id]?[key] ?? ToManyDelta()
                    changes[id, default: [:]][key] = ToManyChange(
                        added: delta.added.sorted(), removed: delta.removed.sorted())
                }
            }
        }
        return changes
    }
}
