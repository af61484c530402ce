extension ContextCore {
    /// Runs `request` (its predicate already bound) over this context's view: the parent's
    /// answer with this context's pending inserts, updates and deletes applied, then sorted,
    /// offset and limited (Core Data's `includesPendingChanges`).
    ///
    /// Objects whose match or order this context's changes may alter (the changed objects of
    /// the entity and, for key paths through relationships, the objects related to changed ones)
    /// are re-evaluated in memory; the parent is asked for `offset + limit + n` rows so that
    /// removing the `n` re-evaluated ones still leaves enough.
    func execute(_ request: FetchRequest) throws -> StoreFetchResult.Content {
        adoptPermanentIDsFromAncestors()
        let depth = max(
            request.predicate?.longestKeyPath ?? 0, request.sortDescriptors.map(\.keyPath.count).max() ?? 0, 1)
        let affected = affectedIDs(of: request.entity, depth: depth)
        guard !affected.isEmpty else { return try parentExecute(request) }
        var view = ViewCache(core: self)

        switch request.resultType {
        case .count:
            var upward = request
            upward.fetchOffset = 0
            upward.fetchLimit = nil
            upward.sortDescriptors = []
            upward.resultType = .ids
            guard case .ids(let ids) = try parentExecute(upward) else { return .count(0) }
            let kept = ids.filter { !affected.contains(resolved($0)) }.count
            let total = kept + (try matching(affected, request, &view).count)
            let windowed = max(0, total - request.fetchOffset)
            return .count(request.fetchLimit.map { min($0, windowed) } ?? windowed)
        case .ids, .objects:
            var upward = request
            upward.fetchOffset = 0
            upward.fetchLimit = request.fetchLimit.map { request.fetchOffset + $0 + affected.count }
            upward.resultType = .objects
            guard case .objects(let parentRows) = try parentExecute(upward) else { return .objects([]) }
            let base = parentRows.filter { !affected.contains(resolved($0.id)) }
            var mine = try matching(affected, request, &view)
            let order = RowOrder(descriptors: request.sortDescriptors)
            mine.sort { order.isOrderedBefore($0, $1, &view) }
            var merged: [ObjectSnapshot] = []
            merged.reserveCapacity(base.count + mine.count)
            var i = 0
            var j = 0
            while i < base.count || j < mine.count {
                if j == mine.count || (i < base.count && !order.isOrderedBefore(mine[j], base[i], &view)) {
                    merged.append(base[i])
                    i += 1
                } else {
                    merged.append(mine[j])
                    j += 1
                }
            }
            var window = merged.dropFirst(request.fetchOffset)
            if let limit = request.fetchLimit { window = window.prefix(limit) }
            return request.resultType == .ids ? .ids(window.map(\.id)) : .objects(Array(window))
        }
    }

    /// The parent's answer to `request`. Objects from a store that can leave out to-many values come without
    /// them: their to-many relationships are faults of their own, read when used.
    func parentExecute(_ request: FetchRequest) throws -> StoreFetchResult.Content {
        switch source {
        case .store(let store as any ToManyFaultingStore) where request.resultType == .objects:
            return try store.fetchLeavingOutToMany(request).content
        case .store(let store): return try store.fetch(request).content
        case .parent(let parent): return try parent.performAndWait { try parent.core.execute(request) }
        }
    }

    /// The affected objects that match `request` now, with their current values.
    private func matching(
        _ affected: Set<ObjectID>, _ request: FetchRequest, _ view: inout ViewCache
    ) throws -> [ObjectSnapshot] {
        var rows: [ObjectSnapshot] = []
        let evaluator: PredicateEvaluator?
        do {
            evaluator = try request.predicate.map { (predicate) throws(ObjectPredicateError) in
                try PredicateEvaluator(predicate, entity: request.entity, in: model)
            }
        } catch {
            throw StoreError.invalidRequest(field: "where", message: error.description)
        }
        for id in affected.sorted(by: FetchOrdering.isOrderedBefore) {
            guard let values = view.values(of: id) else { continue }
            if let evaluator {
                var cache = view
                let matches = evaluator.evaluate(values: values, lookup: { cache.values(of: $0) })
                view = cache
                guard matches else { continue }
            }
            let version = registry[id]?.committedVersion ?? view.version(of: id)
            rows.append(ObjectSnapshot(id: id, version: version, values: values))
        }
        return rows
    }

    /// The objects of `entity` whose match or position this context's changes may alter.
    ///
    /// With key paths of length `depth`, an object is affected when it is changed itself or is
    /// within `depth - 1` relationship hops (old or new values) of a changed object.
    func affectedIDs(of entity: String, depth: Int) -> Set<ObjectID> {
        var result = Set(changed.filter { $0.entity == entity })
        guard depth > 1, !changed.isEmpty else { return result }
        var view = ViewCache(core: self)
        var visited = changed
        var frontier = Array(changed)
        for _ in 1..<depth {
            var next: [ObjectID] = []
            for id in frontier {
                for neighbour in neighbours(of: id, &view) where visited.insert(neighbour).inserted {
                    next.append(neighbour)
                    if neighbour.entity == entity { result.insert(neighbour) }
                }
            }
            frontier = next
        }
        return result
    }

    private func neighbours(of id: ObjectID, _ view: inout ViewCache) -> [ObjectID] {
        guard let entity = model.entity(named: id.entity), !entity.relationships.isEmpty else { return [] }
        var result: [ObjectID] = []
        if let object = registry[id] {
            for relationship in entity.relationships {
                result += object.currentValue(forKey: relationship.name).referencedIDs
                result += (object.committed?[relationship.name]?.referencedIDs ?? [])
            }
        } else if let values = view.values(of: id) {
            for relationship in entity.relationships { result += values[relationship.name]?.referencedIDs ?? [] }
        }
        return result.map(resolved)
    }
}

/// Values of objects in one context's view during one fetch, loaded once each.
struct ViewCache {
    let core: ContextCore
    private var loaded: [ObjectID: ObjectSnapshot?] = [:]

    init(core: ContextCore) { self.core = core }

    /// The object's current values in the context's view; `nil` when deleted or missing.
    mutating func values(of id: ObjectID) -> [String: PropertyValue]? {
        snapshot(of: id)?.values
    }

    mutating func version(of id: ObjectID) -> Int64 { snapshot(of: id)?.version ?? 0 }

    private mutating func snapshot(of id: ObjectID) -> ObjectSnapshot? {
        let id = core.resolved(id)
        if let object = core.registry[id] {
            guard !object.deletedFlag else { return nil }
            let snapshot = object.snapshot  // fires the fault, which tells whether the object exists
            return object.missingFlag ? nil : snapshot
        }
        if let known = loaded[id] { return known }
        let snapshot = (try? core.parentSnapshots(of: [id]))?[id]
        loaded[id] = .some(snapshot)
        return snapshot
    }
}

/// Compares fetched rows by a request's sort descriptors, then by object ID.
struct RowOrder {
    let descriptors: [ObjectSortDescriptor]

    func isOrderedBefore(_ a: ObjectSnapshot, _ b: ObjectSnapshot, _ view: inout ViewCache) -> Bool {
        for descriptor in descriptors {
            let x = value(at: descriptor.keyPath, in: a.values, &view)
            let y = value(at: descriptor.keyPath, in: b.values, &view)
            let order = FetchOrdering.compare(x, y)
            if order != 0 { return descriptor.ascending ? order < 0 : order > 0 }
        }
        return FetchOrdering.isOrderedBefore(a.id, b.id)
    }

    /// The value at `keyPath` (through to-one relationships); `null` when a hop is empty.
    private func value(
        at keyPath: [String], in values: [String: PropertyValue], _ view: inout ViewCache
    ) -> PropertyValue {
        var current = values
        for (index, key) in keyPath.enumerated() {
            let value = current[key] ?? .null
            if index == keyPath.count - 1 { return value }
            guard case .reference(let id) = value, let next = view.values(of: id) else { return .null }
            current = next
        }
        return .null
    }
}
