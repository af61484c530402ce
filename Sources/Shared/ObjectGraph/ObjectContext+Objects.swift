// MARK: - On the context's queue: objects

extension ObjectContext {
    /// Inserts a new object of `entity`, with a temporary ID and the model's default values.
    ///
    /// An entity the model does not have is a programmer error and traps.
    public func insert(entity: String) -> ManagedObject {
        core.insert(entity: entity)
    }

    /// Deletes `object`, applying its relationships' delete rules in memory (`nullify`,
    /// `cascade`; `deny` is checked by `save()`).
    public func delete(_ object: ManagedObject) {
        core.delete(object)
    }

    /// The object for `id` in this context: the registered one, or a new fault that loads its
    /// values from the parent on first access. Never fails; see `existingObject(with:)`.
    public func object(with id: ObjectID) -> ManagedObject {
        let core = self.core
        if core.registry[core.resolved(id)] == nil { core.learnPermanentIDs(toFind: id) }
        return core.object(with: id)
    }

    /// The object for `id` with its values loaded; its to-many relationships stay faults until used, as after a
    /// fetch.
    ///
    /// - Throws: `StoreError.notFound` when no such object exists in this context's view
    ///   (never saved, deleted in the store, or deleted in this context or an ancestor).
    public func existingObject(with id: ObjectID) throws -> ManagedObject {
        let core = self.core
        if core.registry[core.resolved(id)] == nil { core.learnPermanentIDs(toFind: id) }
        let id = core.resolved(id)
        if let object = core.registry[id] {
            if object.deletedFlag { throw StoreError.notFound(id) }
            if object.insertedFlag || (object.committed != nil && !object.missingFlag) { return object }
        }
        guard let snapshot = try core.parentSnapshots(of: [id], leavingOutToMany: true)[id] else {
            throw StoreError.notFound(id)
        }
        let object = core.object(with: id)
        if object.committed == nil || object.missingFlag {
            object.committed = snapshot.values
            object.committedVersion = snapshot.version
            object.missingFlag = false
            object.normalizeChanges()
        }
        return object
    }

    /// The object registered for `id`, or `nil` (no fault is made).
    public func registeredObject(for id: ObjectID) -> ManagedObject? {
        let core = self.core
        return core.registry[core.resolved(id)]
    }

    /// Every object registered in the context.
    public var registeredObjects: Set<ManagedObject> { Set(core.registry.values) }

    /// Whether the context has unsaved inserts, updates or deletes.
    public var hasChanges: Bool {
        let core = self.core
        return core.changed.contains { id in
            guard let object = core.registry[id] else { return false }
            return object.insertedFlag != object.deletedFlag || (!object.deletedFlag && object.hasValueChanges)
        }
    }

    /// The unsaved inserted objects.
    public var insertedObjects: Set<ManagedObject> { Set(core.insertedObjects) }
    /// The objects with unsaved changes that are neither inserted nor deleted.
    public var updatedObjects: Set<ManagedObject> { Set(core.updatedObjects) }
    /// The objects deleted and not saved yet (not counting inserted ones).
    public var deletedObjects: Set<ManagedObject> { Set(core.deletedObjects) }

    /// Replaces the temporary IDs of the inserted `objects` with permanent IDs reserved in the
    /// store (Core Data's `obtainPermanentIDs(for:)`). Objects that are not inserted in this
    /// context, or already have permanent IDs, are left alone.
    public func obtainPermanentIDs(for objects: [ManagedObject]) throws {
        let core = self.core
        let targets = objects.filter {
            $0.insertedFlag && $0.objectID.isTemporary && core.registry[$0.objectID] === $0
        }
        var map: [ObjectID: ObjectID] = [:]
        for (entity, group) in Dictionary(grouping: targets, by: { $0.entity.name }).sorted(by: { $0.key < $1.key }) {
            let ordered = group.sorted { FetchOrdering.isOrderedBefore($0.objectID, $1.objectID) }
            let ids = try rootStore.obtainPermanentIDs(entity: entity, count: ordered.count)
            guard ids.count == ordered.count else {
                throw StoreError.unavailable("the store reserved \(ids.count) IDs for \(ordered.count) objects")
            }
            for (object, id) in zip(ordered, ids) { map[object.objectID] = id }
        }
        core.rekey(map)
    }

    // MARK: - Undoing

    /// Drops every unsaved change (Core Data's `rollback()`).
    public func rollback() { core.rollback() }

    /// Forgets every registered object and unsaved change (Core Data's `reset()`).
    public func reset() { core.reset() }

    /// Re-reads `object` from the parent: without `mergeChanges` its unsaved changes are dropped
    /// and it turns into a fault; with it they stay on top of the fresh values.
    public func refresh(_ object: ManagedObject, mergeChanges: Bool) {
        core.refresh(object, mergeChanges: mergeChanges)
    }
}
