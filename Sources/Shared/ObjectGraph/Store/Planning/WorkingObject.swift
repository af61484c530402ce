/// One object as a save being planned sees it: its committed snapshot (none for an insert) and
/// its values as the save changes them, relationships held as IDs for cheap inverse maintenance.
///
/// Attributes are held by position (the entity's attribute order), so that planning a large
/// insert builds no dictionary per object until the snapshot it produces.
///
/// To-many relationships are faults: the committed snapshot does not hold them, and a change
/// made from the other side (a reading joining a device) is recorded as a `ToManyDelta` without
/// reading the members. Only a relationship the save needs in full (a request that sets the whole
/// set, a delete rule, a `storeTrump` comparison) has its members read, into `toMany`.
package struct WorkingObject {
    package let id: ObjectID
    /// The position of the object's entity in the model's `entities`.
    package let entityIndex: Int
    /// The committed state, without to-many values; `nil` for an object this save inserts.
    package let before: ObjectSnapshot?
    /// The attribute values in the entity's attribute order (empty until an insert is applied:
    /// every attribute `.null`).
    package var attributes: [PropertyValue]
    package var toOne: [String: ObjectID]
    /// The current members of the to-many relationships read in full (every one of an insert).
    package var toMany: [String: Set<ObjectID>]
    /// Members added and removed relative to the committed ones, per to-many relationship.
    package var toManyDeltas: [String: ToManyDelta]
    package var isDeleted = false

    package var isInserted: Bool { before == nil }

    /// A new object of the entity at `entityIndex` with no values yet.
    package init(insertedAs id: ObjectID, entityIndex: Int) {
        self.id = id
        self.entityIndex = entityIndex
        self.before = nil
        self.attributes = []
        self.toOne = [:]
        self.toMany = [:]
        self.toManyDeltas = [:]
    }

    /// An existing object, from its committed snapshot (attributes and to-one values).
    package init(snapshot: ObjectSnapshot, entity: EntityDescription, entityIndex: Int) {
        id = snapshot.id
        self.entityIndex = entityIndex
        before = snapshot
        attributes = entity.attributes.map { snapshot.values[$0.name] ?? .null }
        toOne = [:]
        toMany = [:]
        toManyDeltas = [:]
        for relationship in entity.relationships where !relationship.isToMany {
            if case .reference(let target)? = snapshot.values[relationship.name] { toOne[relationship.name] = target }
        }
    }

    /// The value of the attribute at `position` in the entity's attribute order.
    package func attribute(at position: Int) -> PropertyValue {
        position < attributes.count ? attributes[position] : .null
    }

    /// Whether the members of to-many `key` are known (read in full, or the object is new).
    package func knowsMembers(of key: String) -> Bool { isInserted || toMany[key] != nil }

    /// The current members of to-many `key`; only when `knowsMembers(of:)`.
    package func knownMembers(of key: String) -> Set<ObjectID> {
        toMany[key] ?? toManyDeltas[key]?.added ?? []
    }

    /// The committed members of to-many `key`, from its current members; only when `knowsMembers(of:)`.
    package func committedMembers(of key: String) -> Set<ObjectID> {
        guard !isInserted else { return [] }
        var members = toMany[key] ?? []
        if let delta = toManyDeltas[key] {
            members.subtract(delta.added)
            members.formUnion(delta.removed)
        }
        return members
    }

    /// Adds `member` to to-many `key` (a no-op when it is known to be a member already).
    package mutating func addMember(_ member: ObjectID, to key: String) {
        if toMany[key] != nil {
            guard toMany[key]!.insert(member).inserted else { return }
        }
        changeDelta(of: key) { delta in
            if delta.removed.remove(member) == nil { delta.added.insert(member) }
        }
    }

    /// Removes `member` from to-many `key` (a no-op when it is known not to be a member).
    package mutating func removeMember(_ member: ObjectID, from key: String) {
        if toMany[key] != nil {
            guard toMany[key]!.remove(member) != nil else { return }
        } else if isInserted, toManyDeltas[key]?.added.contains(member) != true {
            return
        }
        changeDelta(of: key) { delta in
            if delta.added.remove(member) == nil { delta.removed.insert(member) }
        }
    }

    /// Changes the delta of to-many `key` where it is stored: a copy taken out of the dictionary would share the
    /// sets' storage with it, so each insert would copy a whole set (a batch deleting thousands of one device's
    /// readings spent most of its time there).
    private mutating func changeDelta(of key: String, _ body: (inout ToManyDelta) -> Void) {
        body(&toManyDeltas[key, default: ToManyDelta()])
        if toManyDeltas[key]?.isEmpty == true { toManyDeltas[key] = nil }
    }

    /// The values a snapshot of the object holds: every attribute, to-one `.reference`/`.null`,
    /// and the to-many relationships whose members are known, as sorted `.references`.
    package func values(of entity: EntityDescription) -> [String: PropertyValue] {
        var values: [String: PropertyValue] = [:]
        values.reserveCapacity(entity.attributes.count + entity.relationships.count)
        for (position, attribute) in entity.attributes.enumerated() {
            values[attribute.name] = self.attribute(at: position)
        }
        for relationship in entity.relationships {
            if relationship.isToMany {
                guard knowsMembers(of: relationship.name) else { continue }
                values[relationship.name] = .references(knownMembers(of: relationship.name).sorted())
            } else {
                values[relationship.name] = toOne[relationship.name].map(PropertyValue.reference) ?? .null
            }
        }
        return values
    }
}
