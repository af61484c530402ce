import ContextBusObjectGraph

/// Long runs of equality tests on one key path, rewritten as one `IN` list for SQL.
///
/// `k == a OR k == b OR …` holds exactly when `k IN {a, b, …}` does, and `k != a AND k != b AND …`
/// exactly when `NOT k IN {a, b, …}` does: `ResolvedComparison.holds` defines `IN` as "equal to
/// one of the items", with the same string options, and `nil` items compare as `==` does. So the
/// rewrite never changes an answer, and the in-memory evaluator, which is the reference, keeps
/// the predicate as written.
///
/// SQLite plans a `WHERE` of thousands of `IS` / `IS NOT` terms in time that grows faster than
/// the terms (10,000 `!=` clauses: about 11 s in SQLite alone), but a list of the same values in
/// one `IN (…)` in linear time. Predicates built by programs (`address == 'a' OR address == 'b'
/// OR …`, one clause per known device) are the ones that grow that long.
extension ResolvedPredicate {
    /// This predicate with every AND/OR group's equality runs merged into `IN` lists.
    func mergingEqualitiesIntoLists() -> ResolvedPredicate {
        switch self {
        case .constant, .comparison: return self
        case .not(let inner): return .not(inner.mergingEqualitiesIntoLists())
        case .and(let items):
            return .and(Self.merging(items.map { $0.mergingEqualitiesIntoLists() }, runsOf: .notEqual))
        case .or(let items):
            return .or(Self.merging(items.map { $0.mergingEqualitiesIntoLists() }, runsOf: .equal))
        }
    }

    /// The items of one group with its comparisons `op` of the same key path and string options
    /// (at least two of them) replaced, where the first of them stood, by one `IN` test: as is
    /// for `==` in an OR group, negated for `!=` in an AND group. Order does not change an AND
    /// or OR answer: evaluating a comparison has no effect.
    private static func merging(
        _ items: [ResolvedPredicate], runsOf op: ObjectPredicate.ComparisonOperator
    ) -> [ResolvedPredicate] {
        let candidates = items.map { mergeable($0, op) }
        var runs: [MergeableKey: [PredicateScalar]] = [:]
        for case let (key, value)? in candidates { runs[key, default: []].append(value) }
        guard runs.values.contains(where: { $0.count > 1 }) else { return items }
        var merged: [ResolvedPredicate] = []
        merged.reserveCapacity(items.count)
        var written = Set<MergeableKey>()
        for (item, candidate) in zip(items, candidates) {
            guard let (key, _) = candidate, let values = runs[key], values.count > 1 else {
                merged.append(item)
                continue
            }
            guard written.insert(key).inserted else { continue }
            let list = ResolvedPredicate.comparison(
                ResolvedComparison(
                    lhs: .keyPath(key.path), op: .in, rhs: .list(values), options: key.options,
                    collectionSide: nil, quantifier: .any, regex: nil))
            merged.append(op == .equal ? list : .not(list))
        }
        return merged
    }

    /// What a run is merged by: the key path and the string options.
    private struct MergeableKey: Hashable {
        var path: ResolvedKeyPath
        var options: ObjectPredicate.StringOptions
    }

    /// `key op constant` or `constant op key` on a key path that crosses no to-many relationship.
    private static func mergeable(
        _ item: ResolvedPredicate, _ op: ObjectPredicate.ComparisonOperator
    ) -> (MergeableKey, PredicateScalar)? {
        guard case .comparison(let c) = item, c.op == op, c.collectionSide == nil else { return nil }
        switch (c.lhs, c.rhs) {
        case (.keyPath(let path), .constant(let value)), (.constant(let value), .keyPath(let path)):
            return (MergeableKey(path: path, options: c.options), value)
        default:
            return nil
        }
    }
}
