import Dispatch
import Foundation

/// The mutable state of one `ObjectContext`: its registered objects and pending changes.
///
/// Not Sendable: it is reached only through the context's `QueueConfined` box, on the context's
/// queue. Calls go *up* only (to the parent context with `performAndWait`, or to the store);
/// a parent never waits for a child, so parent/child chains cannot deadlock.
final class ContextCore {
    /// Where committed values come from.
    enum Source {
        case store(any PersistentStore)
        case parent(ObjectContext)
    }

    let model: Model
    let source: Source
    let queueKey: DispatchSpecificKey<UInt8>
    weak var context: ObjectContext?

    /// Every object registered in the context, by ID.
    var registry: [ObjectID: ManagedObject] = [:]
    /// IDs of registered objects that are inserted, deleted or changed.
    var changed: Set<ObjectID> = []
    /// Temporary IDs this context (or its ancestors) has seen replaced by permanent ones.
    var permanentIDs: [ObjectID: ObjectID] = [:]
    /// Temporary IDs of registered objects that exist in the parent (pushed by a save, or the
    /// parent's own inserts): the ancestors replace them when the top-level context saves.
    var parentTemporaryIDs: Set<ObjectID> = []
    /// Transactions this context committed itself, not to be merged again from the store.
    var ownTransactions: Set<Int64> = []

    init(model: Model, source: Source, queueKey: DispatchSpecificKey<UInt8>) {
        self.model = model
        self.source = source
        self.queueKey = queueKey
    }

    func assertOnQueue() {
        precondition(
            DispatchQueue.getSpecific(key: queueKey) != nil,
            "a managed object was used outside its context's queue: wrap the call in perform / performAndWait")
    }

    var parentContext: ObjectContext? {
        if case .parent(let parent) = source { return parent }
        return nil
    }

    var store: any PersistentStore {
        switch source {
        case .store(let store): return store
        case .parent(let parent): return parent.rootStore
        }
    }

    // MARK: - Registry

    /// The registered object for `id`, or a new fault registered for it.
    func object(with id: ObjectID) -> ManagedObject {
        let id = resolved(id)
        if let object = registry[id] { return object }
        guard let entity = model.entity(named: id.entity) else {
            preconditionFailure("the model has no entity '\(id.entity)' (object \(id))")
        }
        let object = ManagedObject(id: id, entity: entity, core: self, committed: nil, version: 0)
        registry[id] = object
        if id.isTemporary { parentTemporaryIDs.insert(id) }
        return object
    }

    /// `id`, or the permanent ID it became.
    func resolved(_ id: ObjectID) -> ObjectID {
        id.isTemporary ? (permanentIDs[id] ?? id) : id
    }

    /// Registers an object made from a snapshot, or fills a registered fault with it.
    func register(_ snapshot: ObjectSnapshot) -> ManagedObject {
        let object = self.object(with: snapshot.id)
        if object.committed == nil {
            object.committed = snapshot.values
            object.committedVersion = snapshot.version
        }
        return object
    }

    func noteChange(of object: ManagedObject) {
        guard registry[object.objectID] === object else { return }
        if object.insertedFlag || object.deletedFlag || object.hasValueChanges {
            changed.insert(object.objectID)
        } else {
            changed.remove(object.objectID)
        }
    }

    func unregister(_ object: ManagedObject) {
        if registry[object.objectID] === object {
            registry.removeValue(forKey: object.objectID)
            changed.remove(object.objectID)
            parentTemporaryIDs.remove(object.objectID)
        }
        object.core = nil
    }

    var changedObjects: [ManagedObject] {
        changed.sorted().compactMap { registry[$0] }
    }

    /// Gives objects new IDs (temporary → permanent) everywhere in the context.
    func rekey(_ map: [ObjectID: ObjectID]) {
        let map = map.filter { $0.key != $0.value }
        guard !map.isEmpty else { return }
        for (old, new) in map where old.isTemporary {
            permanentIDs[old] = new
            parentTemporaryIDs.remove(old)
        }
        var moved: [ManagedObject] = []
        for (old, _) in map {
            if let object = registry.removeValue(forKey: old) { moved.append(object) }
        }
        let wasChanged = changed
        changed = Set(wasChanged.map { map[$0] ?? $0 })
        let referencing = Set(map.keys.map(\.entity))
        for object in registry.values
        where object.entity.relationships.contains(where: { referencing.contains($0.destination) }) {
            object.rewriteReferences(map)
        }
        for object in moved {
            object.rewriteReferences(map)
            if let previous = registry[object.objectID], previous !== object {
                // An insert that became an existing object (its unique key was taken: an upsert) stands for that
                // object now; the instance registered for it before is let go, as a deleted one is.
                previous.core = nil
            }
            registry[object.objectID] = object
        }
    }

    // MARK: - Faulting

    /// Loads a fault's values from the parent; a missing object reads as empty (all `null`).
    func fulfill(_ object: ManagedObject) {
        let snapshot = try? parentSnapshots(of: [object.objectID], leavingOutToMany: true)[object.objectID]
        object.committed = snapshot?.values ?? [:]
        object.committedVersion = snapshot?.version ?? 0
        object.missingFlag = snapshot == nil
        object.normalizeChanges()
    }

    /// Loads the members of to-many `key` of an object whose other values are loaded (the
    /// relationship's own fault): the parent's current members; none when the object is gone.
    func fulfillToMany(_ object: ManagedObject, key: String) {
        let snapshot = try? parentSnapshots(of: [object.objectID])[object.objectID]
        let members = snapshot?.values[key]?.referencedIDs ?? []
        object.committed?[key] = .references(members.map(resolved).sorted())
        object.normalizeChanges()
    }

    /// The current values of `ids` as the parent sees them; missing or deleted objects are absent.
    ///
    /// With `leavingOutToMany`, to-many values may be left out (where the parent can do so
    /// without reading them): the object's to-many relationships are then faults of their own.
    func parentSnapshots(
        of ids: [ObjectID], leavingOutToMany: Bool = false
    ) throws -> [ObjectID: ObjectSnapshot] {
        guard !ids.isEmpty else { return [:] }
        switch source {
        case .store(let store):
            let result =
                if leavingOutToMany, let store = store as? any ToManyFaultingStore {
                    try store.objectsLeavingOutToMany(with: ids)
                } else {
                    try store.objects(with: ids)
                }
            return Dictionary(result.objects.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        case .parent(let parent):
            let (snapshots, mapping) = try parent.performAndWait {
                let core = parent.core
                let mapping = core.resolvedMapping(for: ids)
                return (
                    try core.viewSnapshots(of: ids.map { mapping[$0] ?? $0 }, leavingOutToMany: leavingOutToMany),
                    mapping
                )
            }
            var result: [ObjectID: ObjectSnapshot] = [:]
            for id in ids {
                let parentID = mapping[id] ?? id
                if var snapshot = snapshots[parentID] {
                    snapshot.id = id
                    result[id] = snapshot
                }
            }
            return result
        }
    }

    /// Snapshots of `ids` in this context's view: registered objects with their pending changes,
    /// the others from the parent. Deleted objects are absent.
    func viewSnapshots(of ids: [ObjectID], leavingOutToMany: Bool = false) throws -> [ObjectID: ObjectSnapshot] {
        var result: [ObjectID: ObjectSnapshot] = [:]
        var missing: [ObjectID] = []
        for id in ids {
            let id = resolved(id)
            if let object = registry[id], object.committed != nil || object.insertedFlag || object.deletedFlag {
                if !object.deletedFlag && !object.missingFlag {
                    result[id] = leavingOutToMany ? object.snapshotKeepingToManyFaults : object.snapshot
                }
            } else {
                missing.append(id)
            }
        }
        for (id, snapshot) in try parentSnapshots(of: missing, leavingOutToMany: leavingOutToMany) {
            result[id] = snapshot
        }
        return result
    }

    /// The permanent IDs known for the temporary IDs among `ids` (asking the ancestors too).
    func resolvedMapping(for ids: [ObjectID]) -> [ObjectID: ObjectID] {
        let temporary = ids.filter {
            $0.isTemporary && permanentIDs[$0] == nil && registry[$0]?.insertedFlag != true
        }
        if !temporary.isEmpty, let parent = parentContext {
            let learned = parent.performAndWait { parent.core.resolvedMapping(for: temporary) }
            for (old, new) in learned { permanentIDs[old] = new }
        }
        var result: [ObjectID: ObjectID] = [:]
        for id in ids where id.isTemporary {
            if let new = permanentIDs[id] { result[id] = new }
        }
        return result
    }

    /// Re-keys registered objects whose temporary IDs the ancestors have replaced since.
    func adoptPermanentIDsFromAncestors() {
        guard parentContext != nil else { return }
        guard !parentTemporaryIDs.isEmpty else { return }
        rekey(resolvedMapping(for: Array(parentTemporaryIDs)))
    }
}

extension ContextCore {
    /// Before making a fault for `id`: asks the ancestors which permanent ID a temporary `id`
    /// became, or re-keys this context's objects whose temporary IDs became permanent (one of
    /// which may be `id`), so that one object never gets two registrations.
    func learnPermanentIDs(toFind id: ObjectID) {
        guard parentContext != nil else { return }
        if id.isTemporary {
            _ = resolvedMapping(for: [id])
        } else {
            adoptPermanentIDsFromAncestors()
        }
    }
}

extension ManagedObject {
    /// The object's current values as a snapshot (its version is the committed one).
    var snapshot: ObjectSnapshot {
        var values: [String: PropertyValue] = [:]
        for key in entity.propertyNames { values[key] = currentValue(forKey: key) }
        return ObjectSnapshot(id: objectID, version: version, values: values)
    }

    /// The object's current values without the to-many relationships that are faults (whose
    /// members are not in memory): what a save hands on without reading them.
    var snapshotKeepingToManyFaults: ObjectSnapshot {
        loadIfNeeded()
        var values: [String: PropertyValue] = [:]
        for key in entity.propertyNames where !isToManyFault(key) { values[key] = currentValue(forKey: key) }
        return ObjectSnapshot(id: objectID, version: version, values: values)
    }
}
