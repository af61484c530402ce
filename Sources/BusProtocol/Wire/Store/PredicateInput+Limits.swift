import ContextBusObjectGraph

extension PredicateInput {
    /// The most comparisons through relationships (`device.name`, `ANY readings.chain`, `readings.@count`) one
    /// predicate may hold. Each becomes a correlated subquery, and SQLite's cost of preparing and running a query
    /// grows with the square of their number: 10,000 of them kept a reader busy for minutes.
    package static let maximumRelationshipComparisons = 256

    /// Refuses a predicate with more than `maximumRelationshipComparisons` comparisons through relationships.
    ///
    /// - Throws: `-32602` with `data.field` `"where"`.
    package static func checkCost(of predicate: ContextBusObjectGraph.ObjectPredicate) throws(RPCError) {
        let count = relationshipComparisons(in: predicate)
        guard count > maximumRelationshipComparisons else { return }
        throw RPCError(
            code: .invalidParams,
            message:
                "invalid params: where: the predicate has \(count) comparisons through relationships; "
                + "at most \(maximumRelationshipComparisons) are allowed",
            data: .object(["field": .string("where")]))
    }

    /// The comparisons of `predicate` that go through a relationship (nesting is bounded by the parser).
    package static func relationshipComparisons(in predicate: ContextBusObjectGraph.ObjectPredicate) -> Int {
        switch predicate {
        case .constant: return 0
        case .not(let inner): return relationshipComparisons(in: inner)
        case .and(let items), .or(let items): return items.reduce(0) { $0 + relationshipComparisons(in: $1) }
        case .comparison(let comparison):
            let crosses =
                comparison.quantifier != nil || crossesRelationship(comparison.lhs)
                || crossesRelationship(comparison.rhs)
            return crosses ? 1 : 0
        }
    }

    private static func crossesRelationship(_ operand: PredicateOperand) -> Bool {
        switch operand {
        case .keyPath(let path): return path.count > 1
        case .count: return true
        case .literal, .variable: return false
        case .list(let items): return items.contains(where: crossesRelationship)
        }
    }
}
