/// Checks that a save request fits the model before anything is looked up: known entities and
/// keys, permanent IDs where they are required, no object named twice.
///
/// Failures are `StoreError.invalidRequest` naming the field, such as `insert[0].values.foo`.
struct SaveRequestChecker {
    let model: Model

    /// Checks `request`; returns each insert's ID → its position in `inserts`.
    @discardableResult
    func check(_ request: SaveRequest) throws(StoreError) -> [ObjectID: Int] {
        var inserted: [ObjectID: Int] = [:]
        inserted.reserveCapacity(request.inserts.count)
        // Inserts come in runs of one entity: look the entity up once per run.
        var runEntity: EntityDescription?
        for (i, insert) in request.inserts.enumerated() {
            if runEntity?.name != insert.id.entity {
                runEntity = try entity(of: insert.id, field: "insert[\(i)].entity")
            }
            guard inserted.updateValue(i, forKey: insert.id) == nil else {
                throw .invalidRequest(field: "insert[\(i)].id", message: "\(insert.id) is inserted twice")
            }
            try checkKeys(insert.values.keys, of: runEntity!, field: "insert[\(i)].values")
        }
        var updated: Set<ObjectID> = []
        for (i, update) in request.updates.enumerated() {
            let entity = try entity(of: update.id, field: "update[\(i)].id")
            try requirePermanent(update.id, field: "update[\(i)].id")
            guard updated.insert(update.id).inserted else {
                throw .invalidRequest(field: "update[\(i)].id", message: "\(update.id) is updated twice")
            }
            try checkKeys(update.values.keys, of: entity, field: "update[\(i)].values")
            try checkKeys(update.original.keys, of: entity, field: "update[\(i)].original")
        }
        var deleted: Set<ObjectID> = []
        for (i, delete) in request.deletes.enumerated() {
            _ = try entity(of: delete.id, field: "delete[\(i)].id")
            try requirePermanent(delete.id, field: "delete[\(i)].id")
            guard !updated.contains(delete.id) else {
                throw .invalidRequest(field: "delete[\(i)].id", message: "\(delete.id) is also updated by this save")
            }
            guard deleted.insert(delete.id).inserted else {
                throw .invalidRequest(field: "delete[\(i)].id", message: "\(delete.id) is deleted twice")
            }
        }
        return inserted
    }

    // Field names are built only for a failure (`@autoclosure`): a valid 1,000-object save
    // would otherwise format thousands of strings it never uses.
    private func entity(of id: ObjectID, field: @autoclosure () -> String) throws(StoreError) -> EntityDescription {
        guard let entity = model.entity(named: id.entity) else {
            throw .invalidRequest(field: field(), message: "unknown entity '\(id.entity)'")
        }
        return entity
    }

    private func requirePermanent(_ id: ObjectID, field: @autoclosure () -> String) throws(StoreError) {
        guard !id.isTemporary else {
            throw .invalidRequest(field: field(), message: "\(id) is a temporary ID; only saved objects can be changed")
        }
    }

    private func checkKeys(
        _ keys: Dictionary<String, PropertyValue>.Keys, of entity: EntityDescription,
        field: @autoclosure () -> String
    ) throws(StoreError) {
        func isProperty(_ key: String) -> Bool {
            entity.attributes.contains { $0.name == key } || entity.relationships.contains { $0.name == key }
        }
        guard !keys.allSatisfy(isProperty) else { return }
        for key in keys.sorted() where entity.attribute(named: key) == nil && entity.relationship(named: key) == nil {
            throw .invalidRequest(field: "\(field()).\(key)", message: "\(entity.name) has no property '\(key)'")
        }
    }
}
