// MARK: - On the context's queue: fetching

/// The answer to `ObjectContext.execute(_:)`, shaped by the request's `resultType`.
public enum ContextFetchResult {
    case objects([ManagedObject])
    case ids([ObjectID])
    case count(Int)
}

@available(*, unavailable)
extension ContextFetchResult: Sendable {}

extension ObjectContext {
    /// Runs `request` and answers as its `resultType` asks.
    ///
    /// The answer includes the context's unsaved changes and those of its ancestors (Core Data's
    /// `includesPendingChanges`): pending inserts that match, pending updates with their new
    /// values, no pending deletes; sort, offset and limit apply to the combined set, so the
    /// answer is the same before and after a save.
    ///
    /// - Throws: `StoreError.invalidRequest` for an unknown entity or key, an unbound variable
    ///   or a predicate that does not fit the model; a storage error.
    public func execute(_ request: FetchRequest) throws -> ContextFetchResult {
        let core = self.core
        let prepared = try prepare(request)
        switch try core.execute(prepared) {
        case .objects(let snapshots): return .objects(snapshots.map { core.register($0) })
        case .ids(let ids): return .ids(ids)
        case .count(let count): return .count(count)
        }
    }

    /// The objects `request` selects (whatever its `resultType`).
    public func fetch(_ request: FetchRequest) throws -> [ManagedObject] {
        var request = request
        request.resultType = .objects
        guard case .objects(let objects) = try execute(request) else { return [] }
        return objects
    }

    /// The IDs of the objects `request` selects; `object(with:)` turns them into faults.
    public func fetchIDs(_ request: FetchRequest) throws -> [ObjectID] {
        var request = request
        request.resultType = .ids
        guard case .ids(let ids) = try execute(request) else { return [] }
        return ids
    }

    /// How many objects `request` selects (after its offset and limit).
    public func count(for request: FetchRequest) throws -> Int {
        var request = request
        request.resultType = .count
        guard case .count(let count) = try execute(request) else { return 0 }
        return count
    }

    /// Checks the request against the model and binds the predicate's variables.
    private func prepare(_ request: FetchRequest) throws -> FetchRequest {
        guard let entity = model.entity(named: request.entity) else {
            throw StoreError.invalidRequest(field: "entity", message: "the model has no entity '\(request.entity)'")
        }
        guard request.fetchOffset >= 0, (request.fetchLimit ?? 0) >= 0 else {
            throw StoreError.invalidRequest(field: "limit", message: "offset and limit must not be negative")
        }
        for descriptor in request.sortDescriptors {
            try checkSortKeyPath(descriptor.keyPath, from: entity)
        }
        var prepared = request
        if let predicate = request.predicate {
            do {
                let bound = try predicate.binding(request.arguments)
                try bound.validate(for: request.entity, in: model)
                prepared.predicate = bound
            } catch {
                throw StoreError.invalidRequest(field: "where", message: error.description)
            }
        }
        return prepared
    }

    private func checkSortKeyPath(_ keyPath: [String], from entity: EntityDescription) throws {
        var current = entity
        for (index, key) in keyPath.enumerated() {
            let isLast = index == keyPath.count - 1
            if isLast, current.attribute(named: key) != nil { return }
            if !isLast, let relationship = current.relationship(named: key), !relationship.isToMany,
                let next = model.entity(named: relationship.destination)
            {
                current = next
                continue
            }
            throw StoreError.invalidRequest(
                field: "sort",
                message: "'\(keyPath.joined(separator: "."))' is not an attribute of \(entity.name) "
                    + "(through to-one relationships)")
        }
        throw StoreError.invalidRequest(field: "sort", message: "empty sort key")
    }
}
