/// One object of an object graph, living in one `ObjectContext`: Core Data's `NSManagedObject`.
///
/// An object is touched only on its context's queue (inside `perform` / `performAndWait`); debug
/// builds trap otherwise. To hand an object to another context, pass its `objectID` and call
/// `object(with:)` there.
///
/// An object is a *fault* until its values are needed: objects made by `object(with:)` or
/// fetched as IDs load their values from the parent (context or store) on first access.
///
/// Relationship values are object IDs (`.reference` / `.references`); `relatedObject(forKey:)`
/// and `relatedObjects(forKey:)` turn them into objects of the same context. Setting one side of
/// a relationship updates the inverse side of every object involved, in memory.
public final class ManagedObject {
    /// The object's identity: temporary until the object is saved to a store (or given a
    /// permanent ID by `obtainPermanentIDs(for:)`), then permanent.
    public internal(set) var objectID: ObjectID
    /// The object's entity.
    public let entity: EntityDescription
    /// The committed version the object's values are based on; 0 before the first save.
    ///
    /// Fires the fault when the object is one.
    public var version: Int64 {
        checkQueue()
        loadIfNeeded()
        return committedVersion
    }

    weak var core: ContextCore?
    var committedVersion: Int64
    /// The values as the parent (context or store) last gave them; `nil` while a fault.
    var committed: [String: PropertyValue]?
    /// Changed attributes and to-one relationships: key → new value.
    var changes: [String: PropertyValue] = [:]
    /// Changed to-many relationships: key → IDs added and removed relative to `committed`.
    var toManyChanges: [String: ToManyDelta] = [:]
    var insertedFlag = false
    var deletedFlag = false
    /// Set when the parent had no object to fill the fault with: the values read as empty.
    var missingFlag = false

    init(
        id: ObjectID, entity: EntityDescription, core: ContextCore?, committed: [String: PropertyValue]?, version: Int64
    ) {
        self.objectID = id
        self.entity = entity
        self.core = core
        self.committed = committed
        self.committedVersion = version
    }

    /// The context the object is registered in; `nil` once it was removed (saved delete, reset).
    public var managedObjectContext: ObjectContext? { core?.context }

    /// Whether the object's values have not been loaded yet.
    public var isFault: Bool {
        checkQueue()
        return committed == nil
    }

    /// Whether the object was inserted in its context and not saved from it yet.
    public var isInserted: Bool {
        checkQueue()
        return insertedFlag && !deletedFlag
    }

    /// Whether the object has unsaved changes to its values (and is neither inserted nor deleted).
    public var isUpdated: Bool {
        checkQueue()
        return !insertedFlag && !deletedFlag && hasValueChanges
    }

    /// Whether the object was deleted from its context.
    public var isDeleted: Bool {
        checkQueue()
        return deletedFlag
    }

    /// Whether the object is inserted, deleted or has changed values.
    public var hasChanges: Bool {
        checkQueue()
        return insertedFlag || deletedFlag || hasValueChanges
    }

    var hasValueChanges: Bool { !changes.isEmpty || !toManyChanges.isEmpty }

    /// The keys changed since the object was loaded or saved, with their new values.
    public func changedValues() -> [String: PropertyValue] {
        checkQueue()
        var result = changes
        for key in toManyChanges.keys { result[key] = currentValue(forKey: key) }
        return result
    }

    /// The values of `keys` (every property when `nil`) as last loaded from or saved to the parent.
    ///
    /// An inserted object has no committed values: every key reads `null`.
    public func committedValues(forKeys keys: [String]? = nil) -> [String: PropertyValue] {
        checkQueue()
        loadIfNeeded()
        var result: [String: PropertyValue] = [:]
        for key in keys ?? entity.propertyNames {
            if isToManyFault(key) { loadToMany(key) }
            result[key] = committed?[key] ?? emptyValue(forKey: key)
        }
        return result
    }

    /// The current value of every property.
    public func allValues() -> [String: PropertyValue] {
        checkQueue()
        var result: [String: PropertyValue] = [:]
        for key in entity.propertyNames { result[key] = currentValue(forKey: key) }
        return result
    }

    // MARK: - Internals

    func checkQueue() {
        #if DEBUG
        core?.assertOnQueue()
        #endif
    }

    /// Loads the values from the parent when the object is a fault.
    func loadIfNeeded() {
        guard committed == nil else { return }
        if let core {
            core.fulfill(self)
        } else {
            committed = [:]
        }
    }

    func kind(ofKey key: String) -> PropertyKind {
        if let attribute = entity.attribute(named: key) { return .attribute(attribute) }
        if let relationship = entity.relationship(named: key) {
            return relationship.isToMany ? .toMany(relationship) : .toOne(relationship)
        }
        preconditionFailure("entity \(entity.name) has no property '\(key)'")
    }

    func emptyValue(forKey key: String) -> PropertyValue {
        if let relationship = entity.relationship(named: key), relationship.isToMany { return .references([]) }
        return .null
    }

    /// The current value of `key`: the pending change, else the committed value.
    func currentValue(forKey key: String) -> PropertyValue {
        if case .toMany = kind(ofKey: key) {
            return .references(currentSet(forKey: key).sorted())
        }
        if let value = changes[key] { return value }
        loadIfNeeded()
        if let value = committed?[key] { return value }
        // An unsaved insert reads the model's default for a key it has not set.
        if insertedFlag, let value = entity.attribute(named: key)?.defaultValue { return value }
        return .null
    }

    /// The current members of the to-many relationship `key` (fires the object's fault and the
    /// relationship's).
    func currentSet(forKey key: String) -> Set<ObjectID> {
        loadIfNeeded()
        var set = committedSet(forKey: key)
        if let delta = toManyChanges[key] {
            set.subtract(delta.removed)
            set.formUnion(delta.added)
        }
        return set
    }

    /// The committed members of the to-many relationship `key` (fires the relationship's fault).
    func committedSet(forKey key: String) -> Set<ObjectID> {
        if isToManyFault(key) { loadToMany(key) }
        return Set(committed?[key]?.referencedIDs ?? [])
    }

    /// Whether to-many `key` is a fault of its own: the object's values are loaded, but that
    /// relationship's members are not (a change set updated the object without reading them).
    func isToManyFault(_ key: String) -> Bool {
        guard let committed, committed[key] == nil, !insertedFlag, !missingFlag else { return false }
        return entity.relationship(named: key)?.isToMany == true
    }

    /// Whether the committed members of to-many `key` are in memory.
    func hasLoadedMembers(of key: String) -> Bool {
        committed != nil && !isToManyFault(key)
    }

    /// Fires the fault of to-many `key`: reads its members from the parent.
    func loadToMany(_ key: String) {
        if let core {
            core.fulfillToMany(self, key: key)
        } else {
            committed?[key] = .references([])
        }
    }
}

extension ManagedObject: Hashable {
    /// Objects are equal when they are the same instance.
    public static func == (lhs: ManagedObject, rhs: ManagedObject) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

extension ManagedObject: CustomStringConvertible {
    public var description: String {
        let state = deletedFlag ? " deleted" : insertedFlag ? " inserted" : hasValueChanges ? " updated" : ""
        return "<\(objectID) v\(committedVersion)\(committed == nil && !insertedFlag ? " fault" : "")\(state)>"
    }
}

/// Deliberately not Sendable: an object belongs to its context's queue.
@available(*, unavailable)
extension ManagedObject: Sendable {}

/// What kind of property a key names.
enum PropertyKind {
    case attribute(AttributeDescription)
    case toOne(RelationshipDescription)
    case toMany(RelationshipDescription)
}

/// Pending changes of one to-many relationship, relative to its committed members.
package struct ToManyDelta: Hashable, Sendable {
    package var added: Set<ObjectID> = []
    package var removed: Set<ObjectID> = []

    package init(added: Set<ObjectID> = [], removed: Set<ObjectID> = []) {
        self.added = added
        self.removed = removed
    }
    package var isEmpty: Bool { added.isEmpty && removed.isEmpty }
}

extension PropertyValue {
    /// The IDs a relationship value refers to (none for attributes and `null`).
    package var referencedIDs: [ObjectID] {
        switch self {
        case .reference(let id): return [id]
        case .references(let ids): return ids
        default: return []
        }
    }
}
