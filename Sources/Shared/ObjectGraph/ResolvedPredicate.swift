import Foundation

/// A predicate checked against a model: key paths resolved to relationship steps, constants
/// coerced to the type they are compared with, regular expressions compiled. Both the
/// in-memory evaluator and the SQL compiler work from this form, which is why they agree.
package indirect enum ResolvedPredicate: Sendable {
    case constant(Bool)
    case not(ResolvedPredicate)
    case and([ResolvedPredicate])
    case or([ResolvedPredicate])
    case comparison(ResolvedComparison)
}

/// The type a key path yields, which constants compared with it are coerced to.
package enum OperandType: Sendable, Hashable {
    case attribute(AttributeType)
    /// A to-one relationship's value, or an object reached through a to-many one.
    case object(entity: String)

    package var isNumeric: Bool { self == .attribute(.int) || self == .attribute(.double) }

    /// Whether values of the two types can ever compare equal or be ordered.
    package func isComparable(with other: OperandType) -> Bool {
        self == other || (isNumeric && other.isNumeric)
    }

    package var name: String {
        switch self {
        case .attribute(let t): return (t == .int ? "an " : "a ") + t.rawValue
        case .object(let entity): return "a relationship to \(entity)"
        }
    }
}

/// A key path checked against the model.
package struct ResolvedKeyPath: Sendable, Hashable {
    /// One relationship crossed on the way.
    package struct Step: Sendable, Hashable {
        package var entity: String
        package var key: String
        package var destination: String
        var isToMany: Bool
    }

    /// What the key path yields from the object its steps reach.
    package enum Terminal: Sendable, Hashable {
        case attribute(String, AttributeType)
        /// A to-one relationship's value: the destination's ID (not looked up).
        case reference(String, destination: String)
        /// `@count` of a to-many relationship.
        case count(String, destination: String)
        /// The reached object itself: the key path ends with a to-many relationship.
        case object(entity: String)
        /// A binary attribute compared with numbers: its bytes read as an unsigned
        /// little-endian integer (`PredicateScalar.unsignedLittleEndian`), `nil` for none or
        /// more than eight.
        case unsignedInteger(String)
    }

    package var text: String
    package var steps: [Step]
    package var terminal: Terminal

    /// Whether the key path crosses a to-many relationship (and so yields many values).
    package var isCollection: Bool { steps.contains { $0.isToMany } }

    package var type: OperandType {
        switch terminal {
        case .attribute(_, let t): return .attribute(t)
        case .reference(_, let d): return .object(entity: d)
        case .count, .unsignedInteger: return .attribute(.int)
        case .object(let e): return .object(entity: e)
        }
    }

    /// The same key path reading its binary attribute as a number; `nil` unless it ends with
    /// a binary attribute.
    package var readingBytesAsUnsignedInteger: ResolvedKeyPath? {
        guard case .attribute(let key, .binary) = terminal else { return nil }
        return ResolvedKeyPath(text: text, steps: steps, terminal: .unsignedInteger(key))
    }
}

/// One side of a resolved comparison.
package enum ResolvedOperand: Sendable {
    case constant(PredicateScalar)
    /// The items after `IN` / `BETWEEN`.
    case list([PredicateScalar])
    case keyPath(ResolvedKeyPath)

    package var keyPath: ResolvedKeyPath? {
        if case .keyPath(let k) = self { return k }
        return nil
    }
}

/// `NSRegularExpression` is immutable and documented as thread-safe, so sharing one compiled
/// pattern between threads is safe; this box states that to the compiler.
package final class SharedRegularExpression: @unchecked Sendable {
    package let regex: NSRegularExpression
    package init(_ regex: NSRegularExpression) { self.regex = regex }
}

/// A comparison with its operands resolved.
package struct ResolvedComparison: Sendable {
    package enum Side: Sendable { case lhs, rhs }

    package var lhs: ResolvedOperand
    package var op: ObjectPredicate.ComparisonOperator
    package var rhs: ResolvedOperand
    /// The string options; empty unless the operands are strings.
    package var options: ObjectPredicate.StringOptions
    /// Which side (if any) is a key path through a to-many relationship.
    package var collectionSide: Side?
    /// `ANY` or `ALL` over the collection side (`ANY` when none was written).
    package var quantifier: ObjectPredicate.Quantifier
    /// The compiled pattern of `MATCHES` with a constant pattern.
    package var regex: SharedRegularExpression?

    package init(
        lhs: ResolvedOperand, op: ObjectPredicate.ComparisonOperator, rhs: ResolvedOperand,
        options: ObjectPredicate.StringOptions, collectionSide: Side?, quantifier: ObjectPredicate.Quantifier,
        regex: SharedRegularExpression?
    ) {
        self.lhs = lhs
        self.op = op
        self.rhs = rhs
        self.options = options
        self.collectionSide = collectionSide
        self.quantifier = quantifier
        self.regex = regex
    }
}

extension ResolvedComparison {
    /// Whether `lhs op rhs` holds for two single values (`list` for `IN` / `BETWEEN`),
    /// with NSPredicate's two-valued treatment of `nil`.
    static func holds(
        _ op: ObjectPredicate.ComparisonOperator, _ l: PredicateScalar, _ r: PredicateScalar, list: [PredicateScalar],
        options: ObjectPredicate.StringOptions, regex: SharedRegularExpression?
    ) -> Bool {
        func folded(_ x: PredicateScalar) -> PredicateScalar {
            if !options.isEmpty, case .text(let s) = x { return .text(PredicateStringMatching.fold(s, options)) }
            return x
        }
        switch op {
        case .equal: return PredicateScalar.equal(folded(l), folded(r))
        case .notEqual: return !PredicateScalar.equal(folded(l), folded(r))
        case .less: return PredicateScalar.order(folded(l), folded(r)) == .orderedAscending
        case .lessOrEqual:
            let o = PredicateScalar.order(folded(l), folded(r))
            return o == .orderedAscending || o == .orderedSame
        case .greater: return PredicateScalar.order(folded(l), folded(r)) == .orderedDescending
        case .greaterOrEqual:
            let o = PredicateScalar.order(folded(l), folded(r))
            return o == .orderedDescending || o == .orderedSame
        case .between:
            guard list.count == 2 else { return false }
            let x = folded(l)
            let low = PredicateScalar.order(x, folded(list[0]))
            let high = PredicateScalar.order(x, folded(list[1]))
            return (low == .orderedDescending || low == .orderedSame)
                && (high == .orderedAscending || high == .orderedSame)
        case .in:
            let x = folded(l)
            return list.contains { PredicateScalar.equal(x, folded($0)) }
        case .beginsWith, .endsWith, .contains, .like, .matches:
            guard case .text(let a) = l, case .text(let b) = r else { return false }
            switch op {
            case .beginsWith: return PredicateStringMatching.beginsWith(a, b, options)
            case .endsWith: return PredicateStringMatching.endsWith(a, b, options)
            case .contains: return PredicateStringMatching.contains(a, b, options)
            case .like: return PredicateStringMatching.like(a, b, options)
            default:
                guard let re = regex?.regex ?? PredicateStringMatching.regularExpression(b, options) else {
                    return false
                }
                return PredicateStringMatching.matches(a, re, options)
            }
        }
    }
}
