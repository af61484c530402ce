import Foundation

/// A child context's changes, handed to its parent in memory by `save()`.
struct ChildPush: Sendable {
    /// One changed object: new values of attributes and to-one keys, and to-many deltas.
    struct Update: Sendable {
        var id: ObjectID
        var values: [String: PropertyValue]
        var toMany: [String: ToManyDelta]
    }

    var inserts: [ObjectSnapshot] = []
    var updates: [Update] = []
    var deletes: [ObjectID] = []
}

/// The objects one save hands on, grouped by what happens to them.
struct SaveBatch {
    var inserted: [ManagedObject] = []
    var updated: [ManagedObject] = []
    var deleted: [ManagedObject] = []
    /// Inserted, then deleted before the save: they just leave the context.
    var discarded: [ManagedObject] = []
}

extension ContextCore {
    /// The pending changes, grouped; inserts in creation order (so that stores number them in
    /// that order, which keeps ID ties sorted the same before and after the save).
    func saveBatch() -> SaveBatch {
        var batch = SaveBatch()
        for object in changedObjects.sorted(by: { Self.isOrderedBefore($0.objectID, $1.objectID) }) {
            switch (object.insertedFlag, object.deletedFlag) {
            case (true, true): batch.discarded.append(object)
            case (true, false): batch.inserted.append(object)
            case (false, true): batch.deleted.append(object)
            case (false, false): if object.hasValueChanges { batch.updated.append(object) }
            }
        }
        return batch
    }

    // MARK: - Save to a store

    /// The store request for `batch`. Of each relationship pair only one side is sent (the to-one
    /// side of a one-to-many; the alphabetically first side otherwise): the store keeps the
    /// inverse in sync, and sending one side leaves a concurrent change to the other side alone.
    func makeSaveRequest(
        for batch: SaveBatch, mergePolicy: MergePolicy, durability: Durability, author: String?
    ) -> SaveRequest {
        var request = SaveRequest(mergePolicy: mergePolicy, durability: durability, author: author)
        for object in batch.inserted {
            // The attributes the insert set; the store fills in the model's defaults for the others, and an insert
            // that becomes an existing object (its unique key taken: an upsert) leaves that object's other values.
            var values: [String: PropertyValue] = [:]
            for attribute in object.entity.attributes where object.changes[attribute.name] != nil {
                values[attribute.name] = object.currentValue(forKey: attribute.name)
            }
            for relationship in object.entity.relationships where sendsSide(relationship, of: object.entity.name) {
                let value = object.currentValue(forKey: relationship.name)
                if !value.referencedIDs.isEmpty { values[relationship.name] = value }
            }
            request.inserts.append(.init(id: object.objectID, values: values))
        }
        for object in batch.updated {
            var values: [String: PropertyValue] = [:]
            var original: [String: PropertyValue] = [:]
            for key in Set(object.changes.keys).union(object.toManyChanges.keys).sorted() {
                if let relationship = object.entity.relationship(named: key),
                    !sendsSide(relationship, of: object.entity.name)
                {
                    continue
                }
                values[key] = object.currentValue(forKey: key)  // fires the faults `original` reads
                original[key] = object.committed?[key] ?? object.emptyValue(forKey: key)
            }
            guard !values.isEmpty else { continue }
            request.updates.append(
                .init(
                    id: object.objectID, version: object.committedVersion > 0 ? object.committedVersion : nil,
                    values: values,
                    original: original))
        }
        for object in batch.deleted {
            request.deletes.append(
                .init(id: object.objectID, version: object.committedVersion > 0 ? object.committedVersion : nil))
        }
        return request
    }

    /// Whether a save sends `relationship` of `entity` (rather than its inverse).
    func sendsSide(_ relationship: RelationshipDescription, of entity: String) -> Bool {
        guard let inverse = model.entity(named: relationship.destination)?.relationship(named: relationship.inverse)
        else { return true }
        switch (relationship.isToMany, inverse.isToMany) {
        case (false, true): return true
        case (true, false): return false
        default:
            return (entity, relationship.name) <= (relationship.destination, relationship.inverse)
        }
    }

    /// Brings the context up to date with a committed save of `batch`: permanent IDs, new
    /// versions, the values the store kept (`changes`: the result's change set, or an empty one when the result
    /// has none, which leaves the saved objects as faults); no pending changes remain.
    func apply(_ result: SaveResult, changes: ChangeSet, of batch: SaveBatch, mergePolicy: MergePolicy) {
        rekey(result.ids)
        let inserted = Dictionary(changes.inserted.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        let updated = Dictionary(changes.updated.map { ($0.snapshot.id, $0) }, uniquingKeysWith: { a, _ in a })
        let deleted = Set(changes.deleted.map(\.id))
        let deltas = changes.hasToManyFaults ? changes.derivedToManyDeltas(model: model) : [:]
        for object in batch.inserted {
            object.insertedFlag = false
            clearChanges(of: object, committed: inserted[object.objectID] ?? updated[object.objectID]?.snapshot)
        }
        for object in batch.updated {
            object.changes = [:]
            object.toManyChanges = [:]
            if let update = updated[object.objectID] {
                // Keeps loaded to-many members the store did not read (`adoptCommitted`).
                adoptCommitted(
                    update.snapshot, changedKeys: update.changedKeys, deltas: deltas[update.snapshot.id], into: object)
            } else {
                object.committed = nil
            }
        }
        for object in batch.deleted {
            if !deleted.contains(object.objectID) && mergePolicy == .rollback {
                object.deletedFlag = false
                clearChanges(of: object, committed: nil)
            } else {
                unregister(object)
            }
        }
        for object in batch.discarded { unregister(object) }
        changed = []
        merge(changes, mergePolicy: .objectTrump)
    }

    /// Makes `snapshot` the object's committed state (a fault when `nil`) and drops its changes.
    private func clearChanges(of object: ManagedObject, committed snapshot: ObjectSnapshot?) {
        object.changes = [:]
        object.toManyChanges = [:]
        object.committed = snapshot?.values
        if let snapshot { object.committedVersion = snapshot.version }
    }

    // MARK: - Save to a parent context

    /// The changes of `batch` as handed to the parent: full values for inserts, changed keys
    /// (to-many as added/removed members) for updates.
    func makeChildPush(for batch: SaveBatch) -> ChildPush {
        var push = ChildPush()
        for object in batch.inserted {
            // Only the attributes the insert set, as a save to a store sends them: the parent's insert keeps
            // reading the defaults for the others.
            var snapshot = object.snapshot
            for attribute in object.entity.attributes where object.changes[attribute.name] == nil {
                snapshot.values.removeValue(forKey: attribute.name)
            }
            push.inserts.append(snapshot)
        }
        for object in batch.updated {
            var values: [String: PropertyValue] = [:]
            for key in object.changes.keys { values[key] = object.currentValue(forKey: key) }
            push.updates.append(.init(id: object.objectID, values: values, toMany: object.toManyChanges))
        }
        push.deletes = batch.deleted.map(\.objectID)
        return push
    }

    /// What a save of `batch` into the parent changes, as a change set (`txn` 0: nothing was
    /// committed to a store).
    func changeSet(for batch: SaveBatch, author: String?) -> ChangeSet {
        ChangeSet(
            txn: 0, time: Date(), author: author, inserted: batch.inserted.map(\.snapshot),
            updated: batch.updated.map { object in
                // To-many faults stay faults: their keys are changed, their values left out, as
                // in a store's change set (`ChangeSet+ToManyFaults.swift`).
                let keys = Set(object.changes.keys).union(object.toManyChanges.keys)
                let snapshot = object.snapshotKeepingToManyFaults  // fires the object's fault
                let committed = object.committed ?? [:]
                var previous: [String: PropertyValue] = [:]
                for key in keys where !object.isToManyFault(key) {
                    previous[key] = committed[key] ?? object.emptyValue(forKey: key)
                }
                return .init(snapshot: snapshot, changedKeys: keys, previousValues: previous)
            },
            deleted: batch.deleted.map { object in
                ObjectSnapshot(id: object.objectID, version: object.committedVersion, values: object.committed ?? [:])
            })
    }

    /// Takes a child's saved changes as this context's own unsaved changes.
    ///
    /// - Throws: `StoreError.notFound` (and changes nothing) when an updated object no longer
    ///   exists in this context's view.
    func apply(_ push: ChildPush) throws {
        for update in push.updates {
            let object = self.object(with: update.id)
            object.loadIfNeeded()
            if object.deletedFlag || object.missingFlag { throw StoreError.notFound(object.objectID) }
        }
        func resolve(_ value: PropertyValue) -> PropertyValue {
            switch value {
            case .reference(let id): return .reference(resolved(id))
            case .references(let ids): return .references(ids.map(resolved).sorted())
            default: return value
            }
        }
        for insert in push.inserts where registry[resolved(insert.id)] == nil {
            guard let entity = model.entity(named: insert.id.entity) else { continue }
            let object = ManagedObject(id: insert.id, entity: entity, core: self, committed: [:], version: 0)
            object.insertedFlag = true
            for (key, value) in insert.values {
                if entity.relationship(named: key)?.isToMany == true {
                    let ids = Set(resolve(value).referencedIDs)
                    if !ids.isEmpty { object.toManyChanges[key] = ToManyDelta(added: ids) }
                } else if !value.isNull {
                    object.changes[key] = resolve(value)
                }
            }
            registry[object.objectID] = object
            changed.insert(object.objectID)
        }
        for update in push.updates {
            let object = self.object(with: update.id)
            for (key, value) in update.values { object.setPrimitiveValue(resolve(value), forKey: key) }
            for (key, delta) in update.toMany {
                for id in delta.removed { object.removePrimitive(resolved(id), fromKey: key) }
                for id in delta.added { object.addPrimitive(resolved(id), toKey: key) }
            }
        }
        for id in push.deletes {
            delete(object(with: id))
        }
    }

    /// Marks `batch` as saved into the parent: the parent now holds these values as committed.
    func completeChildSave(of batch: SaveBatch) {
        for object in batch.inserted where object.objectID.isTemporary {
            parentTemporaryIDs.insert(object.objectID)
        }
        for object in batch.inserted + batch.updated {
            // A to-many fault stays one: the parent now holds the members and the change.
            let values = object.snapshotKeepingToManyFaults.values
            object.insertedFlag = false
            object.changes = [:]
            object.toManyChanges = [:]
            object.committed = values
        }
        for object in batch.deleted + batch.discarded { unregister(object) }
        changed = []
    }
}
