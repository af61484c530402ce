import Foundation

/// The order a fetch returns objects in, matching the store's `ORDER BY`.
///
/// Values compare as SQLite compares the stored columns: `null` first, numbers by value,
/// strings by their UTF-8 bytes (SQLite's `BINARY` collation), booleans `false` first, dates by
/// time, binary data by bytes. Ties are broken by object ID: permanent IDs by number, then
/// temporary IDs in creation order.
enum FetchOrdering {
    /// -1, 0 or 1 as `a` sorts before, with, or after `b` (ascending).
    static func compare(_ a: PropertyValue, _ b: PropertyValue) -> Int {
        switch (a, b) {
        case (.null, .null): return 0
        case (.null, _): return -1
        case (_, .null): return 1
        case (.int(let x), .int(let y)): return sign(x, y)
        case (.int(let x), .double(let y)): return sign(Double(x), y)
        case (.double(let x), .int(let y)): return sign(x, Double(y))
        case (.double(let x), .double(let y)): return sign(x, y)
        case (.bool(let x), .bool(let y)): return sign(x ? 1 : 0, y ? 1 : 0)
        case (.string(let x), .string(let y)): return bytes(Array(x.utf8), Array(y.utf8))
        case (.date(let x), .date(let y)): return sign(x.timeIntervalSince1970, y.timeIntervalSince1970)
        case (.binary(let x), .binary(let y)): return bytes(Array(x), Array(y))
        case (.uuid(let x), .uuid(let y)):
            return bytes(Array(x.uuidString.lowercased().utf8), Array(y.uuidString.lowercased().utf8))
        case (.reference(let x), .reference(let y)):
            return x == y ? 0 : isOrderedBefore(x, y) ? -1 : 1
        default:
            return bytes(Array(a.description.utf8), Array(b.description.utf8))
        }
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

    private static func sign<T: Comparable>(_ x: T, _ y: T) -> Int { x < y ? -1 : x > y ? 1 : 0 }

    private static func bytes(_ x: [UInt8], _ y: [UInt8]) -> Int {
        x == y ? 0 : x.lexicographicallyPrecedes(y) ? -1 : 1
    }
}

extension ContextCore {
    static func isOrderedBefore(_ a: ObjectID, _ b: ObjectID) -> Bool { FetchOrdering.isOrderedBefore(a, b) }
}

extension Predicate {
    /// The longest key path the predicate reads (1 for the object's own values, 0 for none).
    ///
    /// Walks the tree with an explicit stack, so a deep predicate cannot exhaust the call stack.
    var longestKeyPath: Int {
        var longest = 0
        var predicates: [Predicate] = [self]
        var expressions: [PredicateExpression] = []
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
