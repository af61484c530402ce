/// One object as a save being planned sees it: its committed snapshot (none for an insert) and
/// its values as the save changes them, relationships held as IDs for cheap inverse maintenance.
struct WorkingObject {
    let id: ObjectID
    /// The committed state; `nil` for an object this save inserts.
    let before: ObjectSnapshot?
    var attributes: [String: PropertyValue]
    var toOne: [String: ObjectID]
    var toMany: [String: Set<ObjectID>]
    var isDeleted = false

    var isInserted: Bool { before == nil }

    /// A new object of `entity` with no values yet.
    init(insertedAs id: ObjectID) {
        self.id = id
        self.before = nil
        self.attributes = [:]
        self.toOne = [:]
        self.toMany = [:]
    }

    /// An existing object, from its committed snapshot.
    init(snapshot: ObjectSnapshot, entity: EntityDescription) {
        id = snapshot.id
        before = snapshot
        attributes = [:]
        toOne = [:]
        toMany = [:]
        for attribute in entity.attributes {
            attributes[attribute.name] = snapshot.values[attribute.name] ?? .null
        }
        for relationship in entity.relationships {
            switch snapshot.values[relationship.name] {
            case .reference(let target)?: toOne[relationship.name] = target
            case .references(let targets)?: toMany[relationship.name] = Set(targets)
            default: break
            }
        }
    }

    /// Every value, as a snapshot holds them: to-one `.reference`/`.null`, to-many sorted `.references`.
    func values(of entity: EntityDescription) -> [String: PropertyValue] {
        var values = attributes
        if values.count != entity.attributes.count {
            for attribute in entity.attributes where values[attribute.name] == nil { values[attribute.name] = .null }
        }
        for relationship in entity.relationships {
            values[relationship.name] = value(of: relationship)
        }
        return values
    }

    /// The snapshot form of one relationship's value.
    func value(of relationship: RelationshipDescription) -> PropertyValue {
        if relationship.isToMany {
            return .references((toMany[relationship.name] ?? []).sorted())
        }
        return toOne[relationship.name].map(PropertyValue.reference) ?? .null
    }

    /// The objects a relationship points at.
    func targets(of relationship: RelationshipDescription) -> [ObjectID] {
        if relationship.isToMany { return (toMany[relationship.name] ?? []).sorted() }
        return toOne[relationship.name].map { [$0] } ?? []
    }
}
