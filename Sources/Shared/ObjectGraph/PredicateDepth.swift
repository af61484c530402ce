/// Measures how deeply a predicate nests, without recursion, so that the recursive passes
/// (binding, resolution, evaluation, SQL compilation) never meet a tree that could exhaust
/// the stack, even one built in code rather than parsed.
enum PredicateDepth {
    /// - Throws: `ObjectPredicateError.nestingTooDeep` past `ObjectPredicate.maximumNestingDepth`.
    static func check(_ predicate: ObjectPredicate) throws(ObjectPredicateError) {
        // A parsed predicate within the parser's limit is at most that deep in parentheses and
        // NOTs, plus its top-level AND/OR, its comparison and one list.
        let limit = ObjectPredicate.maximumNestingDepth + 3
        var stack: [(ObjectPredicate, Int)] = [(predicate, 0)]
        while let (p, depth) = stack.popLast() {
            guard depth <= limit else { throw .nestingTooDeep(limit: ObjectPredicate.maximumNestingDepth) }
            switch p {
            case .constant: break
            case .not(let inner): stack.append((inner, depth + 1))
            case .and(let items), .or(let items):
                for item in items { stack.append((item, depth + 1)) }
            case .comparison(let c):
                try check(c.lhs, depth: depth + 1, limit: limit)
                try check(c.rhs, depth: depth + 1, limit: limit)
            }
        }
    }

    private static func check(_ expression: PredicateOperand, depth: Int, limit: Int) throws(ObjectPredicateError) {
        var stack: [(PredicateOperand, Int)] = [(expression, depth)]
        while let (e, d) = stack.popLast() {
            guard d <= limit else { throw .nestingTooDeep(limit: ObjectPredicate.maximumNestingDepth) }
            if case .list(let items) = e {
                for item in items { stack.append((item, d + 1)) }
            }
        }
    }
}
