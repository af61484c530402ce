/// Relationship changes with their inverses kept in sync, and delete rules.
///
/// Every relationship has an inverse, so each change is made on both sides: setting
/// `Reading.device` adds the reading to the device's `readings` and removes it from its former
/// device's; giving a to-many a new set detaches the removed objects and attaches the added ones
/// (taking them away from a former owner when the inverse is to-one).
extension ChangeSetPlanner {
    /// Loads `id` into the working set; `false` when it does not exist or this save deleted it.
    mutating func load(_ id: ObjectID) throws -> Bool {
        if let slot = slot(of: id) { return !objects[slot].isDeleted }
        guard id.number != nil, let entityIndex = entityIndex(named: id.entity),
            let snapshot = try source.snapshot(of: id)
        else { return false }
        let slot = objects.count
        objects.append(WorkingObject(snapshot: snapshot, entity: entities[entityIndex], entityIndex: entityIndex))
        slots[id] = slot
        touchOrder.append(slot)
        return true
    }

    /// Loads the objects of `snapshots` (committed, as the source gave them) that are not loaded yet, as `load`
    /// would one by one.
    mutating func prime(with snapshots: [ObjectSnapshot]) {
        for snapshot in snapshots where slot(of: snapshot.id) == nil {
            guard let entityIndex = entityIndex(named: snapshot.id.entity) else { continue }
            let slot = objects.count
            objects.append(WorkingObject(snapshot: snapshot, entity: entities[entityIndex], entityIndex: entityIndex))
            slots[snapshot.id] = slot
            touchOrder.append(slot)
        }
    }

    /// The current members of to-many `relationship` of the loaded object `id`, reading the
    /// committed ones from the source on first use (the relationship is a fault until then).
    mutating func members(of id: ObjectID, _ relationship: RelationshipDescription) throws -> Set<ObjectID> {
        let slot = loadedSlot(id)
        if objects[slot].knowsMembers(of: relationship.name) {
            return objects[slot].knownMembers(of: relationship.name)
        }
        var members = Set(try source.members(of: id, relationship: relationship))
        if let delta = objects[slot].toManyDeltas[relationship.name] {
            members.subtract(delta.removed)
            members.formUnion(delta.added)
        }
        objects[slot].toMany[relationship.name] = members
        return members
    }

    /// The committed value of `key` of the loaded, existing object `id` (to-many members read in full).
    mutating func committedValue(of id: ObjectID, key: String) throws -> PropertyValue {
        let entity = entities[objects[loadedSlot(id)].entityIndex]
        if let relationship = entity.relationship(named: key), relationship.isToMany {
            _ = try members(of: id, relationship)
            return .references(objects[loadedSlot(id)].committedMembers(of: key).sorted())
        }
        return objects[loadedSlot(id)].before?.values[key] ?? .null
    }

    /// Every committed value of the loaded, existing object `id`, to-many members included.
    mutating func committedValues(of id: ObjectID) throws -> [String: PropertyValue] {
        var values = objects[loadedSlot(id)].before?.values ?? [:]
        for relationship in entities[objects[loadedSlot(id)].entityIndex].relationships where relationship.isToMany {
            values[relationship.name] = try committedValue(of: id, key: relationship.name)
        }
        return values
    }

    /// Sets a relationship from a request value (IDs may be temporary IDs of this save's inserts).
    mutating func setRelationship(
        _ relationship: RelationshipDescription, of owner: ObjectID, to value: PropertyValue
    ) throws {
        if relationship.isToMany {
            guard case .references(let ids) = value else {
                fail(
                    owner, relationship.name,
                    "expected a list of \(relationship.destination) IDs, got \(Self.kind(of: value))")
                return
            }
            var targets: Set<ObjectID> = []
            var allResolved = true
            for id in ids {
                if let target = try resolveTarget(id, of: relationship, owner: owner) {
                    targets.insert(target)
                } else {
                    allResolved = false
                }
            }
            if allResolved { try setToMany(relationship, of: owner, to: targets) }
            return
        }
        switch value {
        case .null:
            try setToOne(relationship, of: owner, to: nil)
        case .reference(let id):
            guard let target = try resolveTarget(id, of: relationship, owner: owner) else { return }
            try setToOne(relationship, of: owner, to: target)
        default:
            fail(
                owner, relationship.name,
                "expected a \(relationship.destination) ID or null, got \(Self.kind(of: value))")
        }
    }

    /// The permanent ID of an existing (or inserted) destination object, or `nil` after recording why not.
    private mutating func resolveTarget(
        _ id: ObjectID, of relationship: RelationshipDescription, owner: ObjectID
    ) throws -> ObjectID? {
        guard id.entity == relationship.destination else {
            fail(owner, relationship.name, "\(id) is not a \(relationship.destination)")
            return nil
        }
        var target = id
        if id.isTemporary {
            guard let position = insertPositions[id] else {
                fail(owner, relationship.name, "\(id) is not inserted by this save")
                return nil
            }
            target = objects[firstInsertSlot + position].id
        }
        guard try load(target) else {
            fail(owner, relationship.name, "\(id) does not exist")
            return nil
        }
        return target
    }

    func inverse(of relationship: RelationshipDescription) -> RelationshipDescription {
        model.entity(named: relationship.destination)!.relationship(named: relationship.inverse)!
    }

    private mutating func setToOne(
        _ relationship: RelationshipDescription, of owner: ObjectID, to target: ObjectID?
    ) throws {
        let ownerSlot = loadedSlot(owner)
        let old = objects[ownerSlot].toOne[relationship.name]
        guard old != target else { return }
        objects[ownerSlot].toOne[relationship.name] = target
        let inverse = inverse(of: relationship)
        if let old, try load(old) { detach(owner, from: old, via: inverse) }
        if let target { try attach(owner, to: target, via: inverse, ownerSide: relationship) }
    }

    private mutating func setToMany(
        _ relationship: RelationshipDescription, of owner: ObjectID, to targets: Set<ObjectID>
    ) throws {
        let old = try members(of: owner, relationship)
        guard old != targets else { return }
        let inverse = inverse(of: relationship)
        let ownerSlot = loadedSlot(owner)
        for removed in old.subtracting(targets).sorted() {
            objects[ownerSlot].removeMember(removed, from: relationship.name)
            if try load(removed) { detach(owner, from: removed, via: inverse) }
        }
        for added in targets.subtracting(old).sorted() {
            objects[ownerSlot].addMember(added, to: relationship.name)
            try attach(owner, to: added, via: inverse, ownerSide: relationship)
        }
    }

    /// Adds `owner` to `target`'s `inverse`; a to-one inverse first leaves its former partner,
    /// which then loses `target` from its `ownerSide`.
    private mutating func attach(
        _ owner: ObjectID, to target: ObjectID, via inverse: RelationshipDescription,
        ownerSide: RelationshipDescription
    ) throws {
        let targetSlot = loadedSlot(target)
        if inverse.isToMany {
            objects[targetSlot].addMember(owner, to: inverse.name)
            return
        }
        let previous = objects[targetSlot].toOne[inverse.name]
        guard previous != owner else { return }
        objects[targetSlot].toOne[inverse.name] = owner
        if let previous, try load(previous) { detach(target, from: previous, via: ownerSide) }
    }

    /// Removes `member` from `object`'s `relationship`.
    mutating func detach(_ member: ObjectID, from object: ObjectID, via relationship: RelationshipDescription) {
        let slot = loadedSlot(object)
        if relationship.isToMany {
            objects[slot].removeMember(member, from: relationship.name)
        } else if objects[slot].toOne[relationship.name] == member {
            objects[slot].toOne[relationship.name] = nil
        }
    }

    // MARK: - Deletes

    /// Deletes `id` and applies its relationships' delete rules (cascades recursively).
    mutating func delete(_ id: ObjectID) throws {
        guard let slot = slot(of: id), !objects[slot].isDeleted else { return }
        objects[slot].isDeleted = true
        deletionOrder.append(slot)
        let object = objects[slot]
        let entity = entities[object.entityIndex]
        for relationship in entity.relationships {
            let targets: [ObjectID]
            if relationship.isToMany {
                targets = try members(of: id, relationship).sorted()
            } else {
                targets = object.toOne[relationship.name].map { [$0] } ?? []
            }
            guard !targets.isEmpty else { continue }
            switch relationship.deleteRule {
            case .cascade:
                for target in targets where try load(target) { try delete(target) }
            case .nullify:
                let inverse = inverse(of: relationship)
                for target in targets where try load(target) { detach(id, from: target, via: inverse) }
            case .deny:
                denials.append((owner: id, key: relationship.name, targets: targets))
            }
        }
    }
}
