import ContextBusSupport

extension ObjectPredicate {
    /// The predicate with every `$name` replaced by `arguments[name]`.
    ///
    /// A list for `IN $list` is passed as `.json(.array([…]))` (how a JSON `args` array
    /// arrives) or as `.references([…])`; its elements become the items of a `{…}` list.
    /// A JSON scalar (`.json(.string("x"))`) binds as the plain value (`.string("x")`).
    /// Arguments that name no variable are ignored.
    ///
    /// - Throws: `ObjectPredicateError.unboundVariable` when a variable has no argument,
    ///   `.invalidArgument` for JSON objects or nested arrays, `.nestingTooDeep`.
    public func binding(_ arguments: [String: PropertyValue]) throws(ObjectPredicateError) -> ObjectPredicate {
        try PredicateDepth.check(self)
        return try bound(arguments)
    }

    private func bound(_ arguments: [String: PropertyValue]) throws(ObjectPredicateError) -> ObjectPredicate {
        switch self {
        case .constant: return self
        case .not(let inner): return .not(try inner.bound(arguments))
        case .and(let items):
            var result: [ObjectPredicate] = []
            result.reserveCapacity(items.count)
            for item in items { result.append(try item.bound(arguments)) }
            return .and(result)
        case .or(let items):
            var result: [ObjectPredicate] = []
            result.reserveCapacity(items.count)
            for item in items { result.append(try item.bound(arguments)) }
            return .or(result)
        case .comparison(var c):
            c.lhs = try c.lhs.bound(arguments)
            c.rhs = try c.rhs.bound(arguments)
            return .comparison(c)
        }
    }
}

extension PredicateOperand {
    fileprivate func bound(_ arguments: [String: PropertyValue]) throws(ObjectPredicateError) -> PredicateOperand {
        switch self {
        case .keyPath, .count, .literal: return self
        case .list(let items):
            var result: [PredicateOperand] = []
            result.reserveCapacity(items.count)
            for item in items { result.append(try item.bound(arguments)) }
            return .list(result)
        case .variable(let name):
            guard let value = arguments[name] else { throw .unboundVariable(name) }
            return try Self.expression(for: value, variable: name)
        }
    }

    private static func expression(
        for value: PropertyValue, variable: String
    ) throws(ObjectPredicateError)
        -> PredicateOperand
    {
        switch value {
        case .references(let ids): return .list(ids.map { .literal(.reference($0)) })
        case .json(.array(let items)):
            var result: [PredicateOperand] = []
            for item in items {
                guard let scalar = PropertyValue(jsonScalar: item) else {
                    throw .invalidArgument(
                        variable: variable, reason: "a list may hold only strings, numbers, booleans and null")
                }
                result.append(.literal(scalar))
            }
            return .list(result)
        case .json(let j):
            guard let scalar = PropertyValue(jsonScalar: j) else {
                throw .invalidArgument(variable: variable, reason: "a JSON object cannot be compared")
            }
            return .literal(scalar)
        default:
            return .literal(value)
        }
    }
}

extension PropertyValue {
    /// A JSON scalar as the plain value (`null`, string, int, double, bool); `nil` for arrays and objects.
    init?(jsonScalar json: JSONValue) {
        switch json {
        case .null: self = .null
        case .bool(let b): self = .bool(b)
        case .int(let i): self = .int(i)
        case .double(let d): self = .double(d)
        case .string(let s): self = .string(s)
        case .array, .object: return nil
        }
    }
}
