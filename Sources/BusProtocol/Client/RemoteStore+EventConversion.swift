import ContextBusObjectGraph
import ContextBusWire
import Foundation

// A `store.changed` event of the `"toMany":"changes"` subscription as a `ChangeSet`, from the event alone (no read
// back): contexts merge it into the objects they hold (`ObjectContext.merge`), applying to-many changes to loaded
// members; objects a context does not hold need nothing.

extension RemoteStore {
    /// The change set of one event.
    ///
    /// - Inserted objects are the event's, with all their values.
    /// - Updated objects hold only their changed attributes and to-one relationships (`changedKeys` also names
    ///   the changed to-many keys, whose values are left out, as a store leaves out a to-many set it did not
    ///   read). A context keeps the other values it has (`ContextCore.adoptCommitted`).
    /// - The members added to and removed from to-many sets are expressed on the other side, where
    ///   `ChangeSet`'s contract has them: an updated object's `previousValues` holds the previous value of each
    ///   changed to-one relationship whose inverse is to-many (the owner that listed it as removed, else `null`),
    ///   and a deleted object's snapshot holds, for those relationships, the owner that listed it as removed.
    ///   Contexts derive the to-many changes from that (`derivedToManyDeltas`). A to-many relationship whose
    ///   inverse is also to-many cannot be expressed so: a context holding it loads it again when next used.
    func changeSet(for event: ChangedEvent) throws(StoreError) -> ChangeSet {
        var inserted: [ObjectSnapshot] = []
        for (i, object) in event.inserted.enumerated() {
            inserted.append(try typed { () throws(RPCError) in try object.snapshot(in: model, path: "inserted[\(i)]") })
        }
        let formerOwners = formerOwners(in: event)
        var updated: [ChangeSet.Update] = []
        for (i, object) in event.updated.enumerated() {
            let snapshot = try typed { () throws(RPCError) in try object.snapshot(in: model, path: "updated[\(i)]") }
            var previousValues: [String: PropertyValue] = [:]
            for key in object.values.keys where isToOneWithToManyInverse(key, of: object.id.entity) {
                previousValues[key] = formerOwners[object.id]?[key].map(PropertyValue.reference) ?? .null
            }
            updated.append(
                ChangeSet.Update(
                    snapshot: snapshot, changedKeys: Set(object.values.keys).union(object.toManyChanges.keys),
                    previousValues: previousValues))
        }
        let deleted = event.deleted.map { id in
            ObjectSnapshot(id: id, version: 0, values: formerOwners[id]?.mapValues(PropertyValue.reference) ?? [:])
        }
        return ChangeSet(
            txn: event.txn, time: Date(), author: event.author, inserted: inserted, updated: updated, deleted: deleted)
    }

    /// Member → to-one key → the object whose to-many inverse lists the member as removed in this event.
    private func formerOwners(in event: ChangedEvent) -> [ObjectID: [String: ObjectID]] {
        var owners: [ObjectID: [String: ObjectID]] = [:]
        for object in event.updated where !object.toManyChanges.isEmpty {
            guard let entity = model.entity(named: object.id.entity) else { continue }
            for (key, change) in object.toManyChanges where !change.removed.isEmpty {
                guard let relationship = entity.relationship(named: key), relationship.isToMany,
                    let inverse = model.entity(named: relationship.destination)?.relationship(
                        named: relationship.inverse),
                    !inverse.isToMany
                else { continue }
                for member in change.removed { owners[member, default: [:]][inverse.name] = object.id }
            }
        }
        return owners
    }

    private func isToOneWithToManyInverse(_ key: String, of entityName: String) -> Bool {
        guard let relationship = model.entity(named: entityName)?.relationship(named: key), !relationship.isToMany
        else { return false }
        return model.entity(named: relationship.destination)?.relationship(named: relationship.inverse)?.isToMany
            == true
    }
}
