import Foundation

/// The order a fetch returns objects in, matching the store's `ORDER BY`.
///
/// Values compare as the stores compare them (`PropertyValue.storageOrder`: SQLite's `ORDER BY`
/// over the stored columns, `null` first). Ties are broken by object ID: permanent IDs by number, then
/// temporary IDs in creation order.
enum FetchOrdering {
    /// -1, 0 or 1 as `a` sorts before, with, or after `b` (ascending).
    static func compare(_ a: PropertyValue, _ b: PropertyValue) -> Int {
        PropertyValue.storageOrder(a, b)
    }

    /// The tie-break order of object IDs.
    static func isOrderedBefore(_ a: ObjectID, _ b: ObjectID) -> Bool {
        if a.entity != b.entity { return a.entity < b.entity }
        switch (a.kind, b.kind) {
        case (.permanent(let x), .permanent(let y)): return x < y
        case (.permanent, .temporary): return true
        case (.temporary, .permanent): return false
        case (.temporary(let x), .temporary(let y)):
            // Temporary references are "t<counter>": shorter first, so t9 comes before t10.
            return x.count != y.count ? x.count < y.count : x < y
        }
    }
}

extension ContextCore {
    static func isOrderedBefore(_ a: ObjectID, _ b: ObjectID) -> Bool { FetchOrdering.isOrderedBefore(a, b) }
}

extension ObjectPredicate {
    /// The longest key path the predicate reads (1 for the object's own values, 0 for none).
    ///
    /// Walks the tree with an explicit stack, so a deep predicate cannot exhaust the call stack.
    var longestKeyPath: Int {
        var longest = 0
        var predicates: [ObjectPredicate] = [self]
        var expressions: [PredicateOperand] = []
        while let predicate = predicates.popLast() {
            switch predicate {
            case .constant: break
            case .not(let inner): predicates.append(inner)
            case .and(let parts), .or(let parts): predicates += parts
            case .comparison(let comparison): expressions += [comparison.lhs, comparison.rhs]
            }
        }
        while let expression = expressions.popLast() {
            switch expression {
            case .keyPath(let path), .count(let path): longest = max(longest, path.count)
            case .list(let items): expressions += items
            case .literal, .variable: break
            }
        }
        return longest
    }
}
