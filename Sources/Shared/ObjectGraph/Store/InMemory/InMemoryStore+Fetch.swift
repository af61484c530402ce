extension InMemoryStore {
    public func fetch(_ request: FetchRequest) throws -> StoreFetchResult {
        let fetch = try CheckedFetch(request, model: model)
        return try state.withLock { state throws -> StoreFetchResult in
            let objects = state.objects
            let lookup: (ObjectID) -> [String: PropertyValue]? = { id in
                id.number.flatMap { objects[id.entity]?[$0]?.values }
            }
            let evaluator = try fetch.predicate.map { (predicate) throws(StoreError) in
                try StorePredicates.evaluator(predicate, entity: fetch.entity.name, model: model)
            }
            var matches: [(snapshot: ObjectSnapshot, keys: [PropertyValue])] = []
            for snapshot in (objects[fetch.entity.name] ?? [:]).values {
                if let evaluator, !evaluator.evaluate(values: snapshot.values, lookup: lookup) { continue }
                matches.append((snapshot, fetch.sortKeys.map { Self.sortValue(of: snapshot, for: $0, lookup: lookup) }))
            }
            if fetch.resultType == .count {
                return StoreFetchResult(txn: state.lastTxn, content: .count(fetch.window(ofCount: matches.count)))
            }
            matches.sort { lhs, rhs in
                for (i, key) in fetch.sortKeys.enumerated() {
                    let order = PropertyValue.storageOrder(lhs.keys[i], rhs.keys[i])
                    if order != 0 { return key.ascending ? order < 0 : order > 0 }
                }
                return lhs.snapshot.id.number! < rhs.snapshot.id.number!
            }
            let window = matches.dropFirst(fetch.offset).prefix(fetch.limit ?? Int.max).map(\.snapshot)
            switch fetch.resultType {
            case .ids: return StoreFetchResult(txn: state.lastTxn, content: .ids(window.map(\.id)))
            default: return StoreFetchResult(txn: state.lastTxn, content: .objects(window))
            }
        }
    }

    /// The value a sort key compares for `snapshot`, following to-one relationships (`nil` past an empty one).
    private static func sortValue(
        of snapshot: ObjectSnapshot, for key: CheckedFetch.SortKey, lookup: (ObjectID) -> [String: PropertyValue]?
    ) -> PropertyValue {
        var values = snapshot.values
        for relationship in key.relationships {
            guard case .reference(let target)? = values[relationship.name], let next = lookup(target) else {
                return .null
            }
            values = next
        }
        return values[key.attribute.name] ?? .null
    }
}
