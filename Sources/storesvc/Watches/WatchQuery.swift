import ContextBusObjectGraph

/// A watch's request as the hub computes it: its predicate bound, the key paths it reads, and the order of its list
/// (docs/protocol.md, "Live queries on the wire").
struct WatchQuery {
    let request: FetchRequest
    let entity: EntityDescription
    /// The request's predicate, bound (`nil` without a predicate).
    let evaluator: PredicateEvaluator?
    /// Every key path the predicate and the sort read, from the watched entity.
    let keyPaths: [[String]]

    /// - Throws: `ObjectPredicateError` for a predicate that does not fit the model (the store's fetch names it).
    init(_ request: FetchRequest, entity: EntityDescription, model: Model) throws(ObjectPredicateError) {
        self.request = request
        self.entity = entity
        if let predicate = request.predicate {
            let bound = try predicate.binding(request.arguments)
            evaluator = try PredicateEvaluator(bound, entity: entity.name, in: model)
            var paths: [[String]] = []
            Self.collectKeyPaths(bound, into: &paths)
            keyPaths = paths + request.sortDescriptors.map(\.keyPath)
        } else {
            evaluator = nil
            keyPaths = request.sortDescriptors.map(\.keyPath)
        }
    }

    /// Whether the list is decided by the watched objects' own values alone: no key path goes through a
    /// relationship, so that only changes to the watched entity's objects can change it.
    var readsOwnKeysOnly: Bool { keyPaths.allSatisfy { $0.count == 1 } }

    private static func collectKeyPaths(_ predicate: ObjectPredicate, into paths: inout [[String]]) {
        func collect(_ operand: PredicateOperand) {
            switch operand {
            case .keyPath(let path), .count(let path): paths.append(path)
            case .list(let items): items.forEach(collect)
            case .literal, .variable: break
            }
        }
        switch predicate {
        case .constant: break
        case .not(let inner): collectKeyPaths(inner, into: &paths)
        case .and(let items), .or(let items): for item in items { collectKeyPaths(item, into: &paths) }
        case .comparison(let comparison):
            collect(comparison.lhs)
            collect(comparison.rhs)
        }
    }

    /// Whether an object with these values belongs in the list; `lookup` gives the related objects' values.
    func matches(_ values: [String: PropertyValue], lookup: (ObjectID) -> [String: PropertyValue]?) -> Bool {
        evaluator?.evaluate(values: values, lookup: lookup) ?? true
    }

    /// The values an object sorts by, one per sort descriptor, following to-one relationships with `lookup`.
    func sortValues(
        of values: [String: PropertyValue], lookup: (ObjectID) -> [String: PropertyValue]?
    ) -> [PropertyValue] {
        request.sortDescriptors.map { descriptor in
            var current: [String: PropertyValue]? = values
            for key in descriptor.keyPath.dropLast() {
                guard case .reference(let id)? = current?[key] else { return .null }
                current = lookup(id)
            }
            return current?[descriptor.keyPath.last!] ?? .null
        }
    }

    /// The list's order (the fetch's): each sort value by `PropertyValue.storageOrder`, `null` first when ascending,
    /// then the object ID.
    func precedes(
        _ lhs: (id: ObjectID, sortValues: [PropertyValue]), _ rhs: (id: ObjectID, sortValues: [PropertyValue])
    )
        -> Bool
    {
        for (i, descriptor) in request.sortDescriptors.enumerated() {
            let order = PropertyValue.storageOrder(lhs.sortValues[i], rhs.sortValues[i])
            if order != 0 { return descriptor.ascending ? order < 0 : order > 0 }
        }
        return lhs.id < rhs.id
    }

    /// The objects of the watched entity whose place in the list can differ between the state after transaction
    /// `before` and the state after `after`, given the change sets in between (`past` holds them): the watched
    /// objects they changed, and for each key path through relationships, the watched objects that reach, in
    /// either state, an object whose key on that path they changed.
    func objectsThatMayMove(between before: Int64, and after: Int64, past: inout PastSnapshots) throws -> Set<ObjectID>
    {
        let changes = past.changes.filter { $0.txn > before && $0.txn <= after }
        var result: Set<ObjectID> = []
        for changeSet in changes {
            for snapshot in changeSet.inserted where snapshot.id.entity == entity.name { result.insert(snapshot.id) }
            for update in changeSet.updated where update.snapshot.id.entity == entity.name {
                result.insert(update.snapshot.id)
            }
            for snapshot in changeSet.deleted where snapshot.id.entity == entity.name { result.insert(snapshot.id) }
        }
        let model = past.model
        for path in keyPaths where path.count > 1 {
            // The relationships the path crosses, from the watched entity.
            var relationships: [RelationshipDescription] = []
            var current: EntityDescription? = entity
            for key in path.dropLast() {
                guard let relationship = current?.relationship(named: key) else { break }
                relationships.append(relationship)
                current = model.entity(named: relationship.destination)
            }
            for level in relationships.indices {
                // Objects at depth `level + 1` whose key `path[level + 1]` changed (or that came or went).
                let destination = relationships[level].destination
                let key = path[level + 1]
                var frontier: Set<ObjectID> = []
                for changeSet in changes {
                    for snapshot in changeSet.inserted where snapshot.id.entity == destination {
                        frontier.insert(snapshot.id)
                    }
                    for update in changeSet.updated
                    where update.snapshot.id.entity == destination && update.changedKeys.contains(key) {
                        frontier.insert(update.snapshot.id)
                    }
                    for snapshot in changeSet.deleted where snapshot.id.entity == destination {
                        frontier.insert(snapshot.id)
                    }
                }
                // Back along the path through each relationship's inverse, in both states.
                for relationship in relationships[...level].reversed() where !frontier.isEmpty {
                    var origins: Set<ObjectID> = []
                    let ids = Array(frontier)
                    for txn in [before, after] {
                        for snapshot in try past.snapshots(of: ids, asOf: txn).values {
                            origins.formUnion(snapshot.values[relationship.inverse]?.referencedIDs ?? [])
                        }
                    }
                    frontier = origins
                }
                result.formUnion(frontier)
            }
        }
        return result
    }
}
