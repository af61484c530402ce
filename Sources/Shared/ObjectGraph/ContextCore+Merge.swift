extension ContextCore {
    /// Brings registered objects up to date with a change set saved elsewhere.
    ///
    /// Updated objects take the new values and version; their own pending changes stay on top,
    /// except under `storeTrump` (the changed keys take the saved values) and `rollback` (all of
    /// the object's changes are dropped). Deleted objects leave the context and every reference
    /// to them is removed. Faults stay faults: they load the new values when touched.
    func merge(_ changes: ChangeSet, mergePolicy: MergePolicy) {
        let deltas = changes.hasToManyFaults ? changes.derivedToManyDeltas(model: model) : [:]
        for snapshot in changes.inserted {
            mergeSnapshot(snapshot, changedKeys: nil, deltas: deltas, mergePolicy: mergePolicy)
        }
        for update in changes.updated {
            mergeSnapshot(update.snapshot, changedKeys: update.changedKeys, deltas: deltas, mergePolicy: mergePolicy)
        }
        let gone = Set(changes.deleted.map { resolved($0.id) })
        guard !gone.isEmpty else { return }
        for id in gone {
            if let object = registry[id], !object.insertedFlag {
                object.deletedFlag = true
                unregister(object)
            }
        }
        let entities = Set(gone.map(\.entity))
        for object in registry.values
        where object.entity.relationships.contains(where: { entities.contains($0.destination) }) {
            object.forgetReferences(to: gone)
            noteChange(of: object)
        }
    }

    private func mergeSnapshot(
        _ snapshot: ObjectSnapshot, changedKeys: Set<String>?, deltas: [ObjectID: [String: ToManyDelta]],
        mergePolicy: MergePolicy
    ) {
        guard let object = registry[resolved(snapshot.id)], !object.insertedFlag, object.committed != nil,
            snapshot.version >= object.committedVersion
        else { return }
        adoptCommitted(snapshot, changedKeys: changedKeys, deltas: deltas[snapshot.id], into: object)
        if object.hasValueChanges {
            switch mergePolicy {
            case .storeTrump:
                for key in changedKeys ?? Set(object.entity.propertyNames) {
                    object.changes.removeValue(forKey: key)
                    object.toManyChanges.removeValue(forKey: key)
                }
            case .rollback:
                object.changes = [:]
                object.toManyChanges = [:]
            case .error, .objectTrump, .overwrite:
                break
            }
            object.normalizeChanges()
        }
        noteChange(of: object)
    }
}

extension ContextCore {
    /// Makes `snapshot` the committed state of `object`. A to-many value the snapshot leaves out
    /// (a change set that did not read it) stays loaded when the object's members are known at
    /// the previous version: unchanged, or with the transaction's `deltas` applied; otherwise
    /// the relationship becomes a fault, read from the parent when next used. A snapshot that leaves
    /// out attributes or to-one relationships holds only changed keys: see below.
    func adoptCommitted(
        _ snapshot: ObjectSnapshot, changedKeys: Set<String>?, deltas: [String: ToManyDelta]?,
        into object: ManagedObject
    ) {
        var values = snapshot.values.mapValues { value in
            switch value {
            case .reference(let id): return PropertyValue.reference(resolved(id))
            case .references(let ids): return .references(ids.map(resolved).sorted())
            default: return value
            }
        }
        if let old = object.committed {
            for relationship in object.entity.relationships
            where relationship.isToMany && values[relationship.name] == nil {
                let key = relationship.name
                guard case .references(let members)? = old[key] else { continue }
                // The same version (a parent context's change set, or the merge of a save this
                // context just applied) or the next one: nothing was missed in between.
                let isNext = snapshot.version == object.committedVersion + 1
                guard isNext || snapshot.version == object.committedVersion else { continue }
                if changedKeys?.contains(key) != true {
                    values[key] = old[key]
                } else if let delta = deltas?[key] {
                    // Applying a delta twice changes nothing: set operations.
                    let resolvedDelta = ToManyDelta(
                        added: Set(delta.added.map(resolved)), removed: Set(delta.removed.map(resolved)))
                    values[key] = .references(resolvedDelta.applied(to: members))
                }
            }
        }
        // A partial snapshot (a change set that carries only the changed keys, as `RemoteStore`'s do): the keys
        // it leaves out keep their values when nothing was missed in between; otherwise the object becomes a
        // fault, loaded from the parent when next used.
        let leftOut = object.entity.propertyNames.filter { key in
            values[key] == nil && object.entity.relationship(named: key)?.isToMany != true
        }
        if !leftOut.isEmpty {
            guard let old = object.committed,
                snapshot.version == object.committedVersion || snapshot.version == object.committedVersion + 1
            else {
                object.committed = nil
                return
            }
            for key in leftOut { values[key] = old[key] }
        }
        object.committed = values
        object.committedVersion = snapshot.version
    }
}

extension ManagedObject {
    /// Removes `ids` from every relationship value, committed and pending.
    func forgetReferences(to ids: Set<ObjectID>) {
        func strip(_ value: PropertyValue) -> PropertyValue {
            switch value {
            case .reference(let id): return ids.contains(id) ? .null : value
            case .references(let members): return .references(members.filter { !ids.contains($0) })
            default: return value
            }
        }
        if let values = committed {
            var stripped = values
            for relationship in entity.relationships {
                if let value = values[relationship.name] { stripped[relationship.name] = strip(value) }
            }
            committed = stripped
        }
        for (key, value) in changes { changes[key] = strip(value) }
        for (key, delta) in toManyChanges {
            let kept = ToManyDelta(added: delta.added.subtracting(ids), removed: delta.removed.subtracting(ids))
            toManyChanges[key] = kept.isEmpty ? nil : kept
        }
        normalizeChanges()
    }
}
