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
