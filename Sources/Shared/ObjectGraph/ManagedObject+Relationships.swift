extension ManagedObject {
    /// The object the to-one relationship `key` points at, in the same context; `nil` when empty.
    public func relatedObject(forKey key: String) -> ManagedObject? {
        checkQueue()
        guard case .toOne = kind(ofKey: key) else {
            preconditionFailure("\(entity.name).\(key) is not a to-one relationship")
        }
        guard case .reference(let id) = currentValue(forKey: key) else { return nil }
        return core?.object(with: id)
    }

    /// The objects of the to-many relationship `key`, in the same context, ordered by object ID.
    public func relatedObjects(forKey key: String) -> [ManagedObject] {
        checkQueue()
        guard case .toMany = kind(ofKey: key) else {
            preconditionFailure("\(entity.name).\(key) is not a to-many relationship")
        }
        guard let core else { return [] }
        return currentSet(forKey: key).sorted().map { core.object(with: $0) }
    }

    /// Points the to-one relationship `key` at `object` (or empties it), keeping inverses in sync.
    public func setRelatedObject(_ object: ManagedObject?, forKey key: String) {
        checkQueue()
        setValue(object.map { .reference($0.objectID) } ?? .null, forKey: key)
    }

    /// Makes `objects` the members of the to-many relationship `key`, keeping inverses in sync.
    public func setRelatedObjects(_ objects: some Sequence<ManagedObject>, forKey key: String) {
        checkQueue()
        setValue(.references(objects.map(\.objectID)), forKey: key)
    }

    /// Adds `object` to the to-many relationship `key`, keeping the inverse in sync.
    public func addRelatedObject(_ object: ManagedObject, forKey key: String) {
        checkQueue()
        guard case .toMany(let relationship) = kind(ofKey: key) else {
            preconditionFailure("\(entity.name).\(key) is not a to-many relationship")
        }
        var members = currentSet(forKey: key)
        members.insert(object.objectID)
        setToMany(members, forKey: key, relationship: relationship)
    }

    /// Removes `object` from the to-many relationship `key`, keeping the inverse in sync.
    public func removeRelatedObject(_ object: ManagedObject, forKey key: String) {
        checkQueue()
        guard case .toMany(let relationship) = kind(ofKey: key) else {
            preconditionFailure("\(entity.name).\(key) is not a to-many relationship")
        }
        var members = currentSet(forKey: key)
        members.remove(object.objectID)
        setToMany(members, forKey: key, relationship: relationship)
    }

    // MARK: - Inverse maintenance

    func setToOne(_ target: ObjectID?, forKey key: String, relationship: RelationshipDescription) {
        checkDestination(target.map { [$0] } ?? [], relationship)
        let old = currentValue(forKey: key).referencedIDs.first
        guard old != target else { return }
        if let old { detach(self.objectID, from: old, inverse: relationship.inverse) }
        setPrimitiveValue(target.map { .reference($0) } ?? .null, forKey: key)
        if let target { attach(self.objectID, to: target, inverse: relationship.inverse) }
    }

    func setToMany(_ targets: Set<ObjectID>, forKey key: String, relationship: RelationshipDescription) {
        checkDestination(Array(targets), relationship)
        let old = currentSet(forKey: key)
        for removed in old.subtracting(targets).sorted() {
            removePrimitive(removed, fromKey: key)
            detach(objectID, from: removed, inverse: relationship.inverse)
        }
        for added in targets.subtracting(old).sorted() {
            addPrimitive(added, toKey: key)
            attach(objectID, to: added, inverse: relationship.inverse)
        }
    }

    /// Removes `source` from `inverse` of the object `id`.
    private func detach(_ source: ObjectID, from id: ObjectID, inverse: String) {
        guard let core else { return }
        let other = core.object(with: id)
        guard !other.deletedFlag || other === self else { return }
        switch other.kind(ofKey: inverse) {
        case .toMany: other.removePrimitive(source, fromKey: inverse)
        case .toOne:
            if other.currentValue(forKey: inverse) == .reference(source) {
                other.setPrimitiveValue(.null, forKey: inverse)
            }
        case .attribute: preconditionFailure("inverse \(inverse) is an attribute")
        }
    }

    /// Adds `source` to `inverse` of the object `id`; a to-one inverse first leaves its old target.
    private func attach(_ source: ObjectID, to id: ObjectID, inverse: String) {
        guard let core else { return }
        let other = core.object(with: id)
        switch other.kind(ofKey: inverse) {
        case .toMany: other.addPrimitive(source, toKey: inverse)
        case .toOne(let back):
            if let previous = other.currentValue(forKey: inverse).referencedIDs.first, previous != source {
                // `other` leaves `previous`: `previous`'s relationship back to it loses `other`.
                let previousObject = core.object(with: previous)
                switch previousObject.kind(ofKey: back.inverse) {
                case .toMany: previousObject.removePrimitive(id, fromKey: back.inverse)
                case .toOne: previousObject.setPrimitiveValue(.null, forKey: back.inverse)
                case .attribute: break
                }
            }
            other.setPrimitiveValue(.reference(source), forKey: inverse)
        case .attribute: preconditionFailure("inverse \(inverse) is an attribute")
        }
    }

    private func checkDestination(_ ids: [ObjectID], _ relationship: RelationshipDescription) {
        for id in ids {
            precondition(
                id.entity == relationship.destination,
                "\(entity.name).\(relationship.name) holds \(relationship.destination) objects, not \(id)")
        }
    }
}
