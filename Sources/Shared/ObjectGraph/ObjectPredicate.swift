/// A filter over objects: the NSPredicate subset of `docs/protocol.md` ("Predicates"), as a value.
///
/// Parsed from a format string (`ObjectPredicate(format:)`), evaluated in memory against object
/// values, and compiled to SQL with bound parameters. Both evaluations give the same answer.
public indirect enum ObjectPredicate: Sendable, Hashable {
    /// `TRUEPREDICATE` / `FALSEPREDICATE`.
    case constant(Bool)
    case not(ObjectPredicate)
    case and([ObjectPredicate])
    case or([ObjectPredicate])
    case comparison(Comparison)
}

extension ObjectPredicate {
    /// One comparison: `lhs op rhs`, optionally quantified over a to-many key path.
    public struct Comparison: Sendable, Hashable {
        public var lhs: PredicateOperand
        public var op: ComparisonOperator
        public var rhs: PredicateOperand
        /// `ANY` / `ALL` before a key path that goes through a to-many relationship.
        public var quantifier: Quantifier?
        /// `[c]`, `[d]`, `[cd]` on string operators.
        public var options: StringOptions

        public init(
            _ lhs: PredicateOperand, _ op: ComparisonOperator, _ rhs: PredicateOperand,
            quantifier: Quantifier? = nil, options: StringOptions = []
        ) {
            self.lhs = lhs
            self.op = op
            self.rhs = rhs
            self.quantifier = quantifier
            self.options = options
        }
    }

    /// The comparison operators.
    public enum ComparisonOperator: String, Sendable, Hashable, CaseIterable {
        case equal = "=="
        case notEqual = "!="
        case less = "<"
        case lessOrEqual = "<="
        case greater = ">"
        case greaterOrEqual = ">="
        case between = "BETWEEN"
        case `in` = "IN"
        case beginsWith = "BEGINSWITH"
        case endsWith = "ENDSWITH"
        case contains = "CONTAINS"
        case like = "LIKE"
        case matches = "MATCHES"
    }

    /// `ANY` or `ALL`.
    public enum Quantifier: String, Sendable, Hashable {
        case any = "ANY"
        case all = "ALL"
    }

    /// String comparison options.
    public struct StringOptions: OptionSet, Sendable, Hashable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// `[c]`: case-insensitive.
        public static let caseInsensitive = StringOptions(rawValue: 1)
        /// `[d]`: diacritic-insensitive.
        public static let diacriticInsensitive = StringOptions(rawValue: 2)
    }
}

/// One side of a comparison.
public indirect enum PredicateOperand: Sendable, Hashable {
    /// A key path from the evaluated object: `value`, `device.name`, `readings.value`.
    case keyPath([String])
    /// `keyPath.@count` on a to-many relationship.
    case count([String])
    /// A literal: number, string, `true`/`false`, `nil`.
    case literal(PropertyValue)
    /// `$name`, bound from the request's `args` before evaluation.
    case variable(String)
    /// `{a, b, …}` after `IN` or `BETWEEN`.
    case list([PredicateOperand])
}
