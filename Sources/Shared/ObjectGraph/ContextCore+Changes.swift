extension ContextCore {
    /// Inserts a new object of `entityName` with a temporary ID and the model's default values.
    func insert(entity entityName: String) -> ManagedObject {
        guard let entity = model.entity(named: entityName) else {
            preconditionFailure("the model has no entity '\(entityName)'")
        }
        let object = ManagedObject(
            id: .makeTemporary(entity: entityName), entity: entity, core: self, committed: [:], version: 0)
        object.insertedFlag = true
        // No default goes into `changes`: an inserted object reads its model defaults until a key is set
        // (`currentValue`), and its save sends only the keys it set (`makeSaveRequest`).
        registry[object.objectID] = object
        changed.insert(object.objectID)
        return object
    }

    /// Marks `object` deleted and applies its relationships' delete rules in memory:
    /// `nullify` removes it from the other side, `cascade` deletes the other side too, `deny` is
    /// checked when the context saves.
    func delete(_ object: ManagedObject) {
        guard registry[object.objectID] === object, !object.deletedFlag else { return }
        object.loadIfNeeded()
        object.deletedFlag = true
        changed.insert(object.objectID)
        var cascaded: [ManagedObject] = []
        for relationship in object.entity.relationships where relationship.deleteRule != .deny {
            let targets = object.currentValue(forKey: relationship.name).referencedIDs
            for target in targets {
                let other = self.object(with: target)
                if other.deletedFlag { continue }
                switch other.kind(ofKey: relationship.inverse) {
                case .toMany: other.removePrimitive(object.objectID, fromKey: relationship.inverse)
                case .toOne:
                    if other.currentValue(forKey: relationship.inverse) == .reference(object.objectID) {
                        other.setPrimitiveValue(.null, forKey: relationship.inverse)
                    }
                case .attribute: break
                }
                if relationship.deleteRule == .cascade { cascaded.append(other) }
            }
        }
        for other in cascaded { delete(other) }
    }

    /// Objects that are inserted (and not deleted).
    var insertedObjects: [ManagedObject] { changedObjects.filter { $0.insertedFlag && !$0.deletedFlag } }
    /// Objects that have changed values (and are neither inserted nor deleted).
    var updatedObjects: [ManagedObject] {
        changedObjects.filter { !$0.insertedFlag && !$0.deletedFlag && $0.hasValueChanges }
    }
    /// Objects deleted from the context that exist in the parent (not inserted ones).
    var deletedObjects: [ManagedObject] { changedObjects.filter { $0.deletedFlag && !$0.insertedFlag } }

    // MARK: - Undoing

    /// Drops every pending change: inserted objects leave the context, the others get their
    /// committed values back.
    func rollback() {
        for object in changedObjects {
            if object.insertedFlag {
                object.deletedFlag = true
                unregister(object)
            } else {
                object.changes = [:]
                object.toManyChanges = [:]
                object.deletedFlag = false
            }
        }
        changed = []
    }

    /// Forgets every registered object and pending change.
    func reset() {
        for object in registry.values { object.core = nil }
        registry = [:]
        changed = []
        parentTemporaryIDs = []
    }

    /// Re-reads `object` from the parent. Without `mergeChanges` its pending changes are dropped
    /// and it becomes a fault; with it they are kept on top of the fresh values.
    func refresh(_ object: ManagedObject, mergeChanges: Bool) {
        guard registry[object.objectID] === object, !object.insertedFlag else { return }
        if mergeChanges {
            guard object.committed != nil else { return }
            if let snapshot = try? parentSnapshots(of: [object.objectID])[object.objectID] {
                object.committed = snapshot.values
                object.committedVersion = snapshot.version
                object.normalizeChanges()
            }
        } else {
            object.changes = [:]
            object.toManyChanges = [:]
            object.deletedFlag = false
            object.committed = nil
            changed.remove(object.objectID)
        }
    }
}
