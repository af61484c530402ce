extension ContextCore {
    /// Brings registered objects up to date with a change set saved elsewhere.
    ///
    /// Updated objects take the new values and version; their own pending changes stay on top,
    /// except under `storeTrump` (the changed keys take the saved values) and `rollback` (all of
    /// the object's changes are dropped). Deleted objects leave the context and every reference
    /// to them is removed. Faults stay faults: they load the new values when touched.
    func merge(_ changes: ChangeSet, mergePolicy: MergePolicy) {
        for snapshot in changes.inserted {
            mergeSnapshot(snapshot, changedKeys: nil, mergePolicy: mergePolicy)
        }
        for update in changes.updated {
            mergeSnapshot(update.snapshot, changedKeys: update.changedKeys, mergePolicy: mergePolicy)
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

    private func mergeSnapshot(_ snapshot: ObjectSnapshot, changedKeys: Set<String>?, mergePolicy: MergePolicy) {
        guard let object = registry[resolved(snapshot.id)], !object.insertedFlag, object.committed != nil,
            snapshot.version >= object.committedVersion
        else { return }
        object.committed = snapshot.values.mapValues { value in
            switch value {
            case .reference(let id): return .reference(resolved(id))
            case .references(let ids): return .references(ids.map(resolved).sorted())
            default: return value
            }
        }
        object.committedVersion = snapshot.version
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
