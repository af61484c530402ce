extension ObjectPredicate {
    /// Whether an object of `entity` with these `values` matches, evaluated in memory.
    ///
    /// Key paths through relationships read related objects with `lookup`, which returns
    /// their committed-or-pending values (`nil` when the object is gone: a to-one path through
    /// it yields `nil`, a to-many skips it). Missing keys read as `nil`. The answer is the one
    /// `PredicateSQLCompiler` gives in SQL for the same data.
    ///
    /// For many objects, resolve once with `PredicateEvaluator` instead.
    ///
    /// - Throws: what `validate(for:in:)` throws, and `.unboundVariable` for a `$name`
    ///   not bound by `binding(_:)`.
    public func evaluate(
        values: [String: PropertyValue], entity: String, in model: Model,
        lookup: (ObjectID) -> [String: PropertyValue]?
    ) throws(ObjectPredicateError) -> Bool {
        try PredicateEvaluator(self, entity: entity, in: model).evaluate(values: values, lookup: lookup)
    }
}

/// A predicate checked once against an entity of a model, then evaluated against any number
/// of objects (subscriptions and pending-change filtering evaluate the same predicate often).
public struct PredicateEvaluator: Sendable {
    let resolved: ResolvedPredicate

    /// - Throws: what `ObjectPredicate.evaluate(values:entity:in:lookup:)` throws.
    public init(_ predicate: ObjectPredicate, entity: String, in model: Model) throws(ObjectPredicateError) {
        resolved = try PredicateResolver(model: model, allowsVariables: false).resolve(predicate, entity: entity)
    }

    /// Whether the object with these values matches.
    public func evaluate(
        values: [String: PropertyValue], lookup: (ObjectID) -> [String: PropertyValue]?
    ) -> Bool {
        resolved.evaluate(values, lookup)
    }
}

extension ResolvedPredicate {
    func evaluate(_ values: [String: PropertyValue], _ lookup: (ObjectID) -> [String: PropertyValue]?) -> Bool {
        switch self {
        case .constant(let b): return b
        case .not(let inner): return !inner.evaluate(values, lookup)
        case .and(let items): return items.allSatisfy { $0.evaluate(values, lookup) }
        case .or(let items): return items.contains { $0.evaluate(values, lookup) }
        case .comparison(let c): return c.evaluate(values, lookup)
        }
    }
}

extension ResolvedComparison {
    func evaluate(_ values: [String: PropertyValue], _ lookup: (ObjectID) -> [String: PropertyValue]?) -> Bool {
        let list: [PredicateScalar]
        if case .list(let items) = rhs { list = items } else { list = [] }
        func test(_ l: PredicateScalar, _ r: PredicateScalar) -> Bool {
            Self.holds(op, l, r, list: list, options: options, regex: regex)
        }
        switch collectionSide {
        case nil:
            return test(scalar(lhs, values, lookup), scalar(rhs, values, lookup))
        case .lhs:
            let r = scalar(rhs, values, lookup)
            let elements = lhs.keyPath!.values(from: values, lookup)
            return quantifier == .any ? elements.contains { test($0, r) } : elements.allSatisfy { test($0, r) }
        case .rhs:
            let l = scalar(lhs, values, lookup)
            let elements = rhs.keyPath!.values(from: values, lookup)
            return quantifier == .any ? elements.contains { test(l, $0) } : elements.allSatisfy { test(l, $0) }
        }
    }

    private func scalar(
        _ operand: ResolvedOperand, _ values: [String: PropertyValue],
        _ lookup: (ObjectID) -> [String: PropertyValue]?
    ) -> PredicateScalar {
        switch operand {
        case .constant(let c): return c
        case .list: return .null
        case .keyPath(let path): return path.values(from: values, lookup).first ?? .null
        }
    }
}

extension ResolvedKeyPath {
    /// Every value the key path reaches from an object: one (or none, for a broken to-one
    /// chain) unless it crosses a to-many relationship.
    func values(
        from root: [String: PropertyValue], _ lookup: (ObjectID) -> [String: PropertyValue]?
    )
        -> [PredicateScalar]
    {
        var frontier: [(id: ObjectID?, values: [String: PropertyValue])] = [(nil, root)]
        for step in steps {
            var next: [(id: ObjectID?, values: [String: PropertyValue])] = []
            for object in frontier {
                switch object.values[step.key] {
                case .reference(let id)?:
                    if let values = lookup(id) { next.append((id, values)) }
                case .references(let ids)?:
                    for id in ids {
                        if let values = lookup(id) { next.append((id, values)) }
                    }
                default:
                    break
                }
            }
            frontier = next
        }
        return frontier.map { object in
            switch terminal {
            case .attribute(let key, _):
                return PredicateScalar(object.values[key] ?? .null)
            case .unsignedInteger(let key):
                return PredicateScalar(object.values[key] ?? .null).readAsUnsignedInteger
            case .reference(let key, _):
                if case .reference(let id)? = object.values[key] { return .object(id) }
                return .null
            case .count(let key, _):
                if case .references(let ids)? = object.values[key] { return .int(Int64(ids.count)) }
                return .int(0)
            case .object:
                return object.id.map(PredicateScalar.object) ?? .null
            }
        }
    }
}
