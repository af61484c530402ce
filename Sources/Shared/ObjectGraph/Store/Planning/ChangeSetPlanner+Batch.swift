/// Batches (`BatchRequest`): the objects a predicate matches, read in the writer's transaction, become the updates
/// or deletes of an ordinary save, so that delete rules, validation, unique keys, versions, the change set and the
/// history are a save's (docs/protocol.md, "store.batch").
extension ChangeSetPlanner {
    /// `request` with `batch`'s objects as its updates (the values to set, no version check) or deletes, and how
    /// many objects matched.
    ///
    /// - Throws: `.invalidRequest` naming `entity`, `where` or `set.<key>`.
    mutating func resolving(_ batch: BatchRequest, in request: SaveRequest) throws -> (SaveRequest, matched: Int) {
        guard let entity = model.entity(named: batch.entity) else {
            throw StoreError.invalidRequest(field: "entity", message: "unknown entity '\(batch.entity)'")
        }
        let predicate = try batch.predicate.map { (predicate) throws(StoreError) in
            try StorePredicates.prepare(predicate, arguments: batch.arguments, entity: entity.name, model: model)
        }
        var resolved = request
        resolved.batch = nil
        if case .set(let values) = batch.action {
            for key in values.keys.sorted() where entity.attribute(named: key) == nil {
                guard let relationship = entity.relationship(named: key) else {
                    throw StoreError.invalidRequest(
                        field: "set.\(key)", message: "\(entity.name) has no property '\(key)'")
                }
                guard !relationship.isToMany else {
                    throw StoreError.invalidRequest(
                        field: "set.\(key)", message: "a batch cannot set the to-many relationship '\(key)'")
                }
            }
        }
        let matched = try source.objects(of: entity.name, matching: predicate)
        let ids = matched.map(\.id)
        prime(with: matched)
        switch batch.action {
        case .set(let values):
            resolved.updates = ids.map { SaveRequest.Update(id: $0, version: nil, values: values) }
        case .delete:
            resolved.deletes = ids.map { SaveRequest.Delete(id: $0, version: nil) }
        }
        return (resolved, ids.count)
    }
}

// MARK: - Batch deletes as one set

extension ChangeSetPlanner {
    /// The plan of a batch delete whose objects' delete rules reach no further than the other side of their to-one
    /// relationships (an entity without to-many relationships, every to-one `nullify`, none pointing at the entity
    /// itself), as `plan(_:)` would make it, without a working object per deleted object: the matching objects'
    /// snapshots are the deleted ones, and only the objects they point at are loaded, to lose them from their
    /// inverse sets (`detach`) and be updated. The plan names the batch (`SavePlan.bulkDelete`) so that a SQL store
    /// deletes the rows with one `DELETE … WHERE`. `nil` for any other batch, which `resolving(_:in:)` turns into a
    /// save's deletes or updates.
    ///
    /// - Throws: `.invalidRequest` naming `entity` or `where`; `.validation` for an object pointed at that cannot be
    ///   updated (`checkJSONForms`).
    mutating func bulkDeletePlan(_ batch: BatchRequest, in request: SaveRequest) throws -> SavePlan? {
        guard case .delete = batch.action, request.origin == nil, request.inserts.isEmpty, request.updates.isEmpty,
            request.deletes.isEmpty,
            let entity = model.entity(named: batch.entity),
            entity.relationships.allSatisfy({
                !$0.isToMany && $0.deleteRule == .nullify && $0.destination != entity.name
            })
        else { return nil }
        let predicate = try batch.predicate.map { (predicate) throws(StoreError) in
            try StorePredicates.prepare(predicate, arguments: batch.arguments, entity: entity.name, model: model)
        }
        let matched = try source.objects(of: entity.name, matching: predicate)
        // As `delete(_:)` applies `nullify` to each object in turn: the objects pointed at are loaded in that order.
        for object in matched {
            for relationship in entity.relationships {
                guard case .reference(let target)? = object.values[relationship.name], try load(target) else {
                    continue
                }
                detach(object.id, from: target, via: inverse(of: relationship))
            }
        }
        checkDenials()
        checkRequiredAttributes()
        checkJSONForms()
        guard failures.isEmpty else { throw StoreError.validation(failures) }
        var plan = try makePlan(SaveRequest())
        plan.deleted = matched
        plan.matched = matched.count
        plan.bulkDelete = SavePlan.BulkDelete(entity: entity.name, predicate: predicate)
        try checkUniqueness(of: plan)
        return plan
    }
}

// MARK: - Batch sets as one set

extension ChangeSetPlanner {
    /// The plan of a batch `set` of attributes outside every unique key, as `plan(_:)` would make it, without a
    /// working object per object: each matching object whose values the set changes is updated (its version raised
    /// by one, the changed keys with their previous values); one it leaves as it was is not. The plan carries the
    /// values (`SavePlan.bulkUpdate`) so that a SQL store writes them with one `UPDATE`. `nil` for any other batch,
    /// and for one whose values or objects `plan(_:)` refuses (a value of the wrong type, a `null` for a required
    /// attribute, an object holding NaN from an earlier version): the save's path then names every failure.
    ///
    /// - Throws: `.invalidRequest` naming `entity` or `where`.
    mutating func bulkUpdatePlan(_ batch: BatchRequest, in request: SaveRequest) throws -> SavePlan? {
        guard case .set(let values) = batch.action, request.origin == nil, request.inserts.isEmpty,
            request.updates.isEmpty, request.deletes.isEmpty, let entity = model.entity(named: batch.entity)
        else { return nil }
        let uniqueKeys = Set(entity.uniqueBy.joined())
        var checkedValues: [(key: String, value: PropertyValue)] = []
        for key in values.keys.sorted() {
            guard let attribute = entity.attribute(named: key), !uniqueKeys.contains(key) else { return nil }
            let failuresBefore = failures.count
            guard let value = checked(values[key]!, for: attribute, of: ObjectID(entity: entity.name, number: 0)),
                failures.count == failuresBefore, !(value.isNull && !attribute.isOptional)
            else {
                failures.removeAll()
                return nil
            }
            checkedValues.append((key, value))
        }
        let predicate = try batch.predicate.map { (predicate) throws(StoreError) in
            try StorePredicates.prepare(predicate, arguments: batch.arguments, entity: entity.name, model: model)
        }
        let matched = try source.objects(of: entity.name, matching: predicate)
        // `checkJSONForms`: an object that still holds NaN or an infinity fails the batch, changed or not.
        func hasJSONForms(_ object: ObjectSnapshot) -> Bool {
            entity.attributes.allSatisfy { object.values[$0.name]?.hasJSONForm ?? true }
        }
        guard matched.allSatisfy(hasJSONForms) else { return nil }
        var plan = SavePlan()
        plan.updated.reserveCapacity(matched.count)
        for before in matched {
            var after = before
            var changedKeys: Set<String> = []
            var previousValues: [String: PropertyValue] = [:]
            for (key, value) in checkedValues {
                let old = before.values[key] ?? .null
                guard old != value else { continue }
                changedKeys.insert(key)
                previousValues[key] = old
                after.values[key] = value
            }
            guard !changedKeys.isEmpty else { continue }
            after.version += 1
            plan.updated.append(.init(snapshot: after, changedKeys: changedKeys, previousValues: previousValues))
        }
        plan.matched = matched.count
        plan.bulkUpdate = SavePlan.BulkUpdate(entity: entity.name, values: checkedValues)
        try checkUniqueness(of: plan)
        return plan
    }
}
