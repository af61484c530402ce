import Foundation

extension ObjectPredicate {
    /// Checks the predicate against `entity` of `model`: every key path exists and crosses
    /// relationships only, `ANY`/`ALL` stand before a key path through a to-many relationship,
    /// `@count` follows a to-many relationship, every constant can match the key path it is
    /// compared with (a string attribute is never compared with a number), every operator
    /// applies to its operands' type, and every constant `MATCHES` pattern compiles.
    ///
    /// Unbound `$variables` are allowed here (their values are checked when the bound
    /// predicate is evaluated or compiled).
    ///
    /// - Throws: `ObjectPredicateError` naming the key path or variable at fault.
    public func validate(for entity: String, in model: Model) throws(ObjectPredicateError) {
        _ = try PredicateResolver(model: model, allowsVariables: true).resolve(self, entity: entity)
    }
}

/// Turns a `ObjectPredicate` into a `ResolvedPredicate` for one entity of a model.
package struct PredicateResolver {
    package let model: Model
    /// When true (validation of an unbound template), variables are skipped instead of rejected.
    package let allowsVariables: Bool

    package init(model: Model, allowsVariables: Bool) {
        self.model = model
        self.allowsVariables = allowsVariables
    }

    package func resolve(_ predicate: ObjectPredicate, entity: String) throws(ObjectPredicateError) -> ResolvedPredicate
    {
        guard model.entity(named: entity) != nil else { throw .unknownEntity(entity) }
        try PredicateDepth.check(predicate)
        return try resolvePredicate(predicate, entity: entity)
    }

    private func resolvePredicate(
        _ predicate: ObjectPredicate, entity: String
    ) throws(ObjectPredicateError)
        -> ResolvedPredicate
    {
        switch predicate {
        case .constant(let b): return .constant(b)
        case .not(let inner):
            let resolved = try resolvePredicate(inner, entity: entity)
            if case .constant(let b) = resolved { return .constant(!b) }
            return .not(resolved)
        case .and(let items), .or(let items):
            let isAnd: Bool
            if case .and = predicate { isAnd = true } else { isAnd = false }
            // Every item is resolved, even after a decisive constant, so that errors are reported.
            var result: [ResolvedPredicate] = []
            var decided = false
            for item in items {
                switch try resolvePredicate(item, entity: entity) {
                case .constant(let b) where b == isAnd: continue
                case .constant: decided = true
                case let resolved: result.append(resolved)
                }
            }
            if decided { return .constant(!isAnd) }
            if result.isEmpty { return .constant(isAnd) }
            if result.count == 1 { return result[0] }
            return isAnd ? .and(result) : .or(result)
        case .comparison(let c):
            return try resolveComparison(c, entity: entity)
        }
    }

    // MARK: - Operands

    /// An operand before coercion: constants are still the values written.
    package enum Operand {
        case value(PropertyValue)
        case values([PropertyValue])
        case keyPath(ResolvedKeyPath)
        /// A variable, or a list holding one, in validation mode.
        case unbound

        var keyPath: ResolvedKeyPath? {
            if case .keyPath(let k) = self { return k }
            return nil
        }

        var isList: Bool {
            if case .values = self { return true }
            return false
        }
    }

    private func operand(
        _ expression: PredicateOperand, entity: String, op: ObjectPredicate.ComparisonOperator
    )
        throws(ObjectPredicateError) -> Operand
    {
        switch expression {
        case .keyPath(let keys): return .keyPath(try keyPath(keys, entity: entity, count: false))
        case .count(let keys): return .keyPath(try keyPath(keys, entity: entity, count: true))
        case .literal(let value): return .value(Self.normalised(value))
        case .variable(let name):
            guard allowsVariables else { throw .unboundVariable(name) }
            return .unbound
        case .list(let items):
            var values: [PropertyValue] = []
            var hasVariable = false
            for item in items {
                switch item {
                case .literal(let value): values.append(Self.normalised(value))
                case .variable(let name):
                    guard allowsVariables else { throw .unboundVariable(name) }
                    hasVariable = true
                default:
                    throw .invalidList(operator: op.rawValue, reason: "a list may hold only values and variables")
                }
            }
            return hasVariable ? .unbound : .values(values)
        }
    }

    /// JSON scalars as plain values, NaN as `nil`.
    private static func normalised(_ value: PropertyValue) -> PropertyValue {
        switch value {
        case .double(let d) where d.isNaN: return .null
        case .json(let j): return PropertyValue(jsonScalar: j) ?? value
        default: return value
        }
    }

    private func keyPath(
        _ keys: [String], entity root: String, count: Bool
    ) throws(ObjectPredicateError)
        -> ResolvedKeyPath
    {
        let text = keys.joined(separator: ".") + (count ? ".@count" : "")
        var entity = root
        var steps: [ResolvedKeyPath.Step] = []
        for (i, key) in keys.enumerated() {
            let isLast = i == keys.count - 1
            guard let description = model.entity(named: entity) else { throw .unknownEntity(entity) }
            if let attribute = description.attribute(named: key) {
                if isLast && count { throw .countOfNonToMany(keyPath: keys.joined(separator: ".")) }
                guard isLast else { throw .notARelationship(keyPath: text, key: key) }
                return ResolvedKeyPath(text: text, steps: steps, terminal: .attribute(key, attribute.type))
            }
            guard let relationship = description.relationship(named: key) else {
                throw .unknownKey(keyPath: text, entity: entity, key: key)
            }
            let step = ResolvedKeyPath.Step(
                entity: entity, key: key, destination: relationship.destination, isToMany: relationship.isToMany)
            if isLast {
                if count {
                    guard relationship.isToMany else { throw .countOfNonToMany(keyPath: keys.joined(separator: ".")) }
                    return ResolvedKeyPath(
                        text: text, steps: steps, terminal: .count(key, destination: relationship.destination))
                }
                if relationship.isToMany {
                    return ResolvedKeyPath(
                        text: text, steps: steps + [step], terminal: .object(entity: relationship.destination))
                }
                return ResolvedKeyPath(
                    text: text, steps: steps, terminal: .reference(key, destination: relationship.destination))
            }
            steps.append(step)
            entity = relationship.destination
        }
        preconditionFailure("a key path has at least one key")
    }

    // MARK: - Comparisons

    private func resolveComparison(
        _ c: ObjectPredicate.Comparison, entity: String
    ) throws(ObjectPredicateError)
        -> ResolvedPredicate
    {
        var op = c.op
        var quantifier = c.quantifier
        var lhs = try operand(c.lhs, entity: entity, op: op)
        var rhs = try operand(c.rhs, entity: entity, op: op)

        // `toMany CONTAINS x` asks whether the collection holds x.
        if op == .contains, quantifier == nil, let path = lhs.keyPath, case .object = path.terminal {
            op = .equal
            quantifier = .any
        }

        let lhsCollection = lhs.keyPath?.isCollection ?? false
        let rhsCollection = rhs.keyPath?.isCollection ?? false
        if lhsCollection && rhsCollection {
            throw .twoCollections(lhs: lhs.keyPath!.text, rhs: rhs.keyPath!.text)
        }
        if quantifier != nil && !lhsCollection {
            throw .quantifierWithoutToMany(keyPath: lhs.keyPath?.text ?? c.lhs.format)
        }
        let collectionSide: ResolvedComparison.Side? = lhsCollection ? .lhs : rhsCollection ? .rhs : nil

        switch op {
        case .in:
            guard rhs.isList || isUnbound(rhs) else {
                throw .invalidList(operator: "IN", reason: "needs a list {…} or a variable bound to an array")
            }
        case .between:
            if case .values(let items) = rhs, items.count != 2 {
                throw .invalidList(operator: "BETWEEN", reason: "needs exactly two values {low, high}")
            }
            guard rhs.isList || isUnbound(rhs) else {
                throw .invalidList(operator: "BETWEEN", reason: "needs a list of two values {low, high}")
            }
        default:
            guard !rhs.isList else {
                throw .invalidList(operator: op.rawValue, reason: "a list is only allowed after IN or BETWEEN")
            }
        }
        guard !lhs.isList else {
            throw .invalidList(operator: op.rawValue, reason: "a list cannot stand on the left of a comparison")
        }

        // A binary attribute compared with numbers reads its bytes as a number (GATT values).
        if Self.readsBytesAsNumbers(op) {
            (lhs, rhs) = (Self.readingBytesAsNumber(lhs, against: rhs), Self.readingBytesAsNumber(rhs, against: lhs))
        }

        let typed: OperandType
        let typingPath: ResolvedKeyPath
        if let l = lhs.keyPath {
            typed = l.type
            typingPath = l
            if let r = rhs.keyPath, !l.type.isComparable(with: r.type) {
                throw .typeMismatch(keyPath: l.text, expected: l.type.name, value: "'\(r.text)' (\(r.type.name))")
            }
        } else if let r = rhs.keyPath {
            typed = r.type
            typingPath = r
        } else {
            return try foldConstants(lhs, op, rhs, options: c.options)
        }
        try checkOperator(op, typed, typingPath, lhs.keyPath, rhs.keyPath)
        if isUnbound(lhs) || isUnbound(rhs) { return .constant(true) }

        let options: ObjectPredicate.StringOptions = typed == .attribute(.string) ? c.options : []
        let resolvedLHS = try coerce(lhs, to: typed, path: typingPath)
        let resolvedRHS = try coerce(rhs, to: typed, path: typingPath)
        var regex: SharedRegularExpression?
        if op == .matches, case .constant(.text(let pattern)) = resolvedRHS {
            guard let compiled = PredicateStringMatching.regularExpression(pattern, options) else {
                throw .invalidRegularExpression(pattern: pattern)
            }
            regex = SharedRegularExpression(compiled)
        }
        return .comparison(
            ResolvedComparison(
                lhs: resolvedLHS, op: op, rhs: resolvedRHS, options: options, collectionSide: collectionSide,
                quantifier: quantifier ?? .any, regex: regex))
    }

    private func isUnbound(_ operand: Operand) -> Bool {
        if case .unbound = operand { return true }
        return false
    }

    /// Which operators apply to which types.
    private func checkOperator(
        _ op: ObjectPredicate.ComparisonOperator, _ type: OperandType, _ path: ResolvedKeyPath,
        _ lhs: ResolvedKeyPath?, _ rhs: ResolvedKeyPath?
    ) throws(ObjectPredicateError) {
        switch op {
        case .beginsWith, .endsWith, .contains, .like, .matches:
            for p in [lhs, rhs].compactMap({ $0 }) where p.type != .attribute(.string) {
                throw .unsupportedOperator(keyPath: p.text, operator: op.rawValue, type: p.type.name)
            }
        case .less, .lessOrEqual, .greater, .greaterOrEqual, .between:
            if case .object = type {
                throw .unsupportedOperator(keyPath: path.text, operator: op.rawValue, type: type.name)
            }
            if type == .attribute(.json) {
                throw .unsupportedOperator(keyPath: path.text, operator: op.rawValue, type: type.name)
            }
        case .equal, .notEqual, .in:
            if type == .attribute(.json), lhs != nil, rhs != nil {
                throw .unsupportedOperator(keyPath: path.text, operator: op.rawValue, type: type.name)
            }
        }
    }

    /// A comparison of two constants is decided now, the same way the evaluator would.
    private func foldConstants(
        _ lhs: Operand, _ op: ObjectPredicate.ComparisonOperator, _ rhs: Operand, options: ObjectPredicate.StringOptions
    ) throws(ObjectPredicateError) -> ResolvedPredicate {
        guard case .value(let l) = lhs else { return .constant(true) }
        var r: PropertyValue = .null
        var list: [PredicateScalar] = []
        switch rhs {
        case .value(let v): r = v
        case .values(let items): list = items.map(PredicateScalar.init)
        case .keyPath, .unbound: return .constant(true)
        }
        var regex: SharedRegularExpression?
        if op == .matches, case .string(let pattern) = r {
            guard let compiled = PredicateStringMatching.regularExpression(pattern, options) else {
                throw .invalidRegularExpression(pattern: pattern)
            }
            regex = SharedRegularExpression(compiled)
        }
        return .constant(
            ResolvedComparison.holds(
                op, PredicateScalar(l), PredicateScalar(r), list: list, options: options, regex: regex))
    }
}
