import ContextBusSupport
public import Foundation

extension ManagedObject {
    /// The current value of `key`: an attribute value, or the ID(s) of a relationship.
    ///
    /// Fires the fault when the object is one. A key the entity does not have is a programmer
    /// error and traps.
    public func value(forKey key: String) -> PropertyValue {
        checkQueue()
        return currentValue(forKey: key)
    }

    /// Sets `key` to `value`; setting a relationship updates the inverse side too.
    ///
    /// Attribute values are checked against the model when the context saves (a wrong type fails
    /// validation). A relationship value must be `.reference`/`.null` (to-one) or `.references`
    /// (to-many) of objects of the destination entity; anything else is a programmer error.
    public func setValue(_ value: PropertyValue, forKey key: String) {
        checkQueue()
        switch kind(ofKey: key) {
        case .attribute:
            setPrimitiveValue(value, forKey: key)
        case .toOne(let relationship):
            let target: ObjectID?
            switch value {
            case .null: target = nil
            case .reference(let id): target = id
            default: preconditionFailure("\(entity.name).\(key) is a to-one relationship; \(value) is not an object ID")
            }
            setToOne(target, forKey: key, relationship: relationship)
        case .toMany(let relationship):
            let targets: Set<ObjectID>
            switch value {
            case .null: targets = []
            case .references(let ids): targets = Set(ids)
            default:
                preconditionFailure("\(entity.name).\(key) is a to-many relationship; \(value) is not a list of IDs")
            }
            setToMany(targets, forKey: key, relationship: relationship)
        }
    }

    /// The current value of `key` (`value(forKey:)` / `setValue(_:forKey:)`).
    public subscript(key: String) -> PropertyValue {
        get { value(forKey: key) }
        set { setValue(newValue, forKey: key) }
    }

    /// The value of attribute `key` as a `T`; `nil` when it is `null` or of another type.
    ///
    /// ```swift
    /// let name = device["name", as: String.self]
    /// device["connected", as: Bool.self] = true
    /// ```
    public subscript<T: PropertyValueConvertible>(key: String, as type: T.Type) -> T? {
        get { T(propertyValue: value(forKey: key)) }
        set { setValue(newValue?.propertyValue ?? .null, forKey: key) }
    }

    /// The string value of `key`, or `nil`.
    public func string(_ key: String) -> String? { self[key, as: String.self] }
    /// The integer value of `key`, or `nil`.
    public func int(_ key: String) -> Int64? { self[key, as: Int64.self] }
    /// The double value of `key`, or `nil`.
    public func double(_ key: String) -> Double? { self[key, as: Double.self] }
    /// The boolean value of `key`, or `nil`.
    public func bool(_ key: String) -> Bool? { self[key, as: Bool.self] }
    /// The date value of `key`, or `nil`.
    public func date(_ key: String) -> Date? { self[key, as: Date.self] }
    /// The binary value of `key`, or `nil`.
    public func data(_ key: String) -> Data? { self[key, as: Data.self] }
    /// The UUID value of `key`, or `nil`.
    public func uuid(_ key: String) -> UUID? { self[key, as: UUID.self] }
    /// The JSON value of `key`, or `nil`.
    public func json(_ key: String) -> JSONValue? { self[key, as: JSONValue.self] }

    // MARK: - Primitive changes (no inverse maintenance)

    /// Records `value` for an attribute or to-one key without touching inverses.
    func setPrimitiveValue(_ value: PropertyValue, forKey key: String) {
        loadIfNeeded()
        if (committed?[key] ?? .null) == value {
            changes.removeValue(forKey: key)
        } else {
            changes[key] = value
        }
        core?.noteChange(of: self)
    }

    /// Adds `id` to the to-many `key` without touching inverses.
    ///
    /// Neither the object's fault nor the relationship's fires: when the committed members are
    /// not in memory the change is recorded as is, and checked against them once they are loaded
    /// (`normalizeChanges`), as Core Data does for a to-many fault.
    func addPrimitive(_ id: ObjectID, toKey key: String) {
        let isCommittedMember = hasLoadedMembers(of: key) && committed?[key]?.referencedIDs.contains(id) == true
        changeToMany(key) { delta in
            if delta.removed.remove(id) == nil, !isCommittedMember { delta.added.insert(id) }
        }
        core?.noteChange(of: self)
    }

    /// Removes `id` from the to-many `key` without touching inverses (no fault fires; see
    /// `addPrimitive`).
    func removePrimitive(_ id: ObjectID, fromKey key: String) {
        let mayBeCommittedMember =
            !hasLoadedMembers(of: key) || committed?[key]?.referencedIDs.contains(id) == true
        changeToMany(key) { delta in
            if delta.added.remove(id) == nil, mayBeCommittedMember { delta.removed.insert(id) }
        }
        core?.noteChange(of: self)
    }

    /// Changes the pending delta of to-many `key` where it is stored (a copy taken out would share its sets'
    /// storage, so that each insert copied a whole set).
    private func changeToMany(_ key: String, _ body: (inout ToManyDelta) -> Void) {
        body(&toManyChanges[key, default: ToManyDelta()])
        if toManyChanges[key]?.isEmpty == true { toManyChanges[key] = nil }
    }

    /// Drops pending changes that equal the committed values (after the committed values moved);
    /// to-many changes only where the members are loaded.
    func normalizeChanges() {
        guard let committed else { return }
        for (key, value) in changes where (committed[key] ?? .null) == value {
            changes.removeValue(forKey: key)
        }
        for (key, var delta) in toManyChanges where !isToManyFault(key) {
            let base = committedSet(forKey: key)
            delta.added.subtract(base)
            delta.removed.formIntersection(base)
            toManyChanges[key] = delta.isEmpty ? nil : delta
        }
    }

    /// Replaces every occurrence of the IDs in `map` in the object's values and changes.
    func rewriteReferences(_ map: [ObjectID: ObjectID]) {
        func rewrite(_ value: PropertyValue) -> PropertyValue {
            switch value {
            case .reference(let id): return .reference(map[id] ?? id)
            case .references(let ids): return .references(ids.map { map[$0] ?? $0 }.sorted())
            default: return value
            }
        }
        if let newID = map[objectID] { objectID = newID }
        guard !entity.relationships.isEmpty else { return }
        if let values = committed {
            var rewritten = values
            for relationship in entity.relationships {
                if let value = values[relationship.name] { rewritten[relationship.name] = rewrite(value) }
            }
            committed = rewritten
        }
        for (key, value) in changes { changes[key] = rewrite(value) }
        for (key, delta) in toManyChanges {
            toManyChanges[key] = ToManyDelta(
                added: Set(delta.added.map { map[$0] ?? $0 }), removed: Set(delta.removed.map { map[$0] ?? $0 }))
        }
    }
}
