import ContextBusObjectGraph
import ContextBusWire
import Foundation

// The change set of a committed save worked out from the request and the service's answer alone, when they say
// everything the transaction wrote: no read-back round trip, and no to-many set read (a reading saved for a device
// with 10,000 readings costs the same as one for a new device).

extension RemoteStore {
    /// The committed change set of `request`, or `nil` when the request and `answer` do not determine it and the
    /// objects must be read back.
    ///
    /// They do when the transaction wrote exactly what was sent: the merge policy is one that never keeps a value of
    /// the store's over the request's (`error`, `objectTrump`, `overwrite`: these write every changed key, so a
    /// written object always gets a new version), every update carries its `version` and `original`, and the
    /// answer's version is the next one (no conflict: `original` holds the values the update replaced; under
    /// `storeTrump` or `rollback` a conflict may write nothing and leave the version where another save put it,
    /// which the answer cannot tell from no conflict); no deletes (cascades are the store's); and
    /// only one-to-many relationships (a many-to-many set has no to-one side to derive it from, and a one-to-one
    /// changes the other side's to-one). Then:
    /// - an inserted object has the values it was sent, model defaults (or `null`) for the attributes it was not,
    ///   and for each to-many relationship the objects of the request that point at it;
    /// - an updated object has the changed keys with their sent values, `previousValues` from `original`;
    /// - an object changed only as the other side of a relationship (the device of a new reading) has no values,
    ///   and its changed to-many keys are derived by contexts from the other side (`adoptCommitted`).
    /// Versions are the answer's. A context keeps the values the change set leaves out when no version was
    /// skipped, and otherwise turns the object into a fault.
    func changesWithoutReadBack(
        of request: SaveRequest, answer: ContextBusWire.SaveResult, permanentIDs: [ObjectID: ObjectID]
    ) -> ChangeSet? {
        guard request.deletes.isEmpty, [.error, .objectTrump, .overwrite].contains(request.mergePolicy) else {
            return nil
        }
        func permanent(_ id: ObjectID) -> ObjectID { permanentIDs[id] ?? id }
        func permanent(_ value: PropertyValue) -> PropertyValue {
            switch value {
            case .reference(let id): return .reference(permanent(id))
            case .references(let ids): return .references(ids.map(permanent).sorted())
            default: return value
            }
        }
        // Owner → to-many key → members, from the to-one values the request sets.
        var members: [ObjectID: [String: [ObjectID]]] = [:]
        var sent: [(id: ObjectID, values: [String: PropertyValue])] = request.inserts.map { ($0.id, $0.values) }
        sent += request.updates.map { ($0.id, $0.values) }
        for (id, values) in sent {
            guard let entity = model.entity(named: id.entity) else { return nil }
            for (key, value) in values {
                guard let relationship = entity.relationship(named: key) else { continue }
                guard
                    let inverse = model.entity(named: relationship.destination)?.relationship(
                        named: relationship.inverse)
                else { return nil }
                // The to-many side of a pair is never the one sent; a one-to-one changes the other side's to-one.
                guard !relationship.isToMany, inverse.isToMany else { return nil }
                guard case .reference(let owner) = value else { continue }
                members[permanent(owner), default: [:]][inverse.name, default: []].append(permanent(id))
            }
        }
        var inserted: [ObjectSnapshot] = []
        for insert in request.inserts {
            let id = permanent(insert.id)
            guard let entity = model.entity(named: id.entity), let version = answer.versions[id] else { return nil }
            var values: [String: PropertyValue] = [:]
            for attribute in entity.attributes {
                values[attribute.name] = insert.values[attribute.name] ?? attribute.defaultValue ?? .null
            }
            for relationship in entity.relationships {
                if relationship.isToMany {
                    guard
                        model.entity(named: relationship.destination)?.relationship(named: relationship.inverse)?
                            .isToMany == false
                    else { return nil }
                    values[relationship.name] = .references((members[id]?[relationship.name] ?? []).sorted())
                } else {
                    values[relationship.name] = insert.values[relationship.name].map(permanent) ?? .null
                }
            }
            inserted.append(ObjectSnapshot(id: id, version: version, values: values))
        }
        let insertedIDs = Set(inserted.map(\.id))
        var updated: [ChangeSet.Update] = []
        var updatedIDs: Set<ObjectID> = []
        for update in request.updates {
            // A skipped version is a conflict a merge policy resolved: what was written is the store's to say.
            guard let sentVersion = update.version, let version = answer.versions[update.id],
                version == sentVersion + 1
            else { return nil }
            // Contexts derive the old owner's loss of a member from the previous to-one value.
            guard update.values.keys.allSatisfy({ update.original[$0] != nil }) else { return nil }
            updatedIDs.insert(update.id)
            updated.append(
                ChangeSet.Update(
                    snapshot: ObjectSnapshot(
                        id: update.id, version: version, values: update.values.mapValues(permanent)),
                    changedKeys: Set(update.values.keys).union(inverseKeys(of: update.id, changedBy: request)),
                    previousValues: update.original.mapValues(permanent)))
        }
        // The objects written only as the other side: their changed keys, with the members derived by contexts.
        for (id, version) in answer.versions.sorted(by: { $0.key < $1.key })
        where !insertedIDs.contains(id) && !updatedIDs.contains(id) {
            updated.append(
                ChangeSet.Update(
                    snapshot: ObjectSnapshot(id: id, version: version, values: [:]),
                    changedKeys: inverseKeys(of: id, changedBy: request), previousValues: [:]))
        }
        return ChangeSet(
            txn: answer.txn, time: Date(), author: request.author, inserted: inserted, updated: updated, deleted: [])
    }
}
