import Foundation

/// A value as the predicate engine compares it: one representation per comparable kind, so
/// that the in-memory evaluator and the SQL compiler agree by construction.
///
/// | kind | in memory | in SQLite |
/// | --- | --- | --- |
/// | `int`, `double` | exact numeric comparison across the two | INTEGER / REAL, numeric |
/// | `text` (strings, UUIDs lowercased) | UTF-8 bytes (= Unicode scalar order) | TEXT, BINARY collation |
/// | `bool` | false < true | INTEGER 0 / 1 |
/// | `date` | seconds since 1970 | REAL |
/// | `bytes` | lexicographic bytes | BLOB (memcmp) |
/// | `object` | ID equality | the destination's `Z_PK` |
///
/// A double NaN is `null` (SQLite stores NaN as NULL).
package enum PredicateScalar: Sendable, Hashable {
    case null
    case int(Int64)
    case double(Double)
    case text(String)
    case bool(Bool)
    case date(Date)
    case bytes(Data)
    case object(ObjectID)
    /// A non-null JSON value: only ever compared with `nil`.
    case opaque

    /// A stored value as the engine sees it, whatever its attribute type.
    package init(_ value: PropertyValue) {
        switch value {
        case .null: self = .null
        case .string(let s): self = .text(s)
        case .int(let i): self = .int(i)
        case .double(let d): self = d.isNaN ? .null : .double(d)
        case .bool(let b): self = .bool(b)
        case .date(let d): self = .date(d)
        case .binary(let data): self = .bytes(data)
        case .uuid(let u): self = .text(u.uuidString.lowercased())
        case .json(let j): self = j.isNull ? .null : .opaque
        case .reference(let id): self = .object(id)
        case .references: self = .opaque
        }
    }

    package var isNull: Bool { self == .null }

    /// The value to bind in SQL, following `SQLSchema`'s storage conventions.
    package var binding: PropertyValue {
        switch self {
        case .null, .opaque: return .null
        case .int(let i): return .int(i)
        case .double(let d): return .double(d)
        case .text(let s): return .string(s)
        case .bool(let b): return .bool(b)
        case .date(let d): return .date(d)
        case .bytes(let data): return .binary(data)
        // A temporary ID names no stored row; 0 is never a Z_PK (permanent numbers start at 1).
        case .object(let id): return .int(id.number ?? 0)
        }
    }

    // MARK: - Comparison

    /// How two values order; `nil` when either is null or they are not comparable.
    package static func order(_ a: PredicateScalar, _ b: PredicateScalar) -> ComparisonResult? {
        switch (a, b) {
        case (.int(let x), .int(let y)): return x < y ? .orderedAscending : x > y ? .orderedDescending : .orderedSame
        case (.double(let x), .double(let y)):
            return x < y ? .orderedAscending : x > y ? .orderedDescending : .orderedSame
        case (.int(let x), .double(let y)): return compare(x, y)
        case (.double(let x), .int(let y)): return compare(y, x).map(\.reversed)
        case (.text(let x), .text(let y)): return lexicographic(Array(x.utf8), Array(y.utf8))
        case (.bool(let x), .bool(let y)): return x == y ? .orderedSame : (!x ? .orderedAscending : .orderedDescending)
        case (.date(let x), .date(let y)):
            let (s, t) = (x.timeIntervalSince1970, y.timeIntervalSince1970)
            return s < t ? .orderedAscending : s > t ? .orderedDescending : .orderedSame
        case (.bytes(let x), .bytes(let y)): return lexicographic(Array(x), Array(y))
        case (.object(let x), .object(let y)): return x == y ? .orderedSame : nil
        default: return nil
        }
    }

    /// NSPredicate equality: `nil == nil`, `nil` equals nothing else.
    package static func equal(_ a: PredicateScalar, _ b: PredicateScalar) -> Bool {
        if a.isNull || b.isNull { return a.isNull && b.isNull }
        return order(a, b) == .orderedSame
    }

    /// An integer against a double, exactly (as SQLite compares INTEGER with REAL).
    private static func compare(_ i: Int64, _ d: Double) -> ComparisonResult? {
        if d.isNaN { return nil }
        if d >= 9_223_372_036_854_775_808.0 { return .orderedAscending }
        if d < -9_223_372_036_854_775_808.0 { return .orderedDescending }
        let whole = d.rounded(.towardZero)
        let w = Int64(whole)
        if i != w { return i < w ? .orderedAscending : .orderedDescending }
        if d > whole { return .orderedAscending }
        if d < whole { return .orderedDescending }
        return .orderedSame
    }

    private static func lexicographic(_ x: [UInt8], _ y: [UInt8]) -> ComparisonResult {
        for (a, b) in zip(x, y) where a != b { return a < b ? .orderedAscending : .orderedDescending }
        return x.count < y.count ? .orderedAscending : x.count > y.count ? .orderedDescending : .orderedSame
    }
}

extension ComparisonResult {
    fileprivate var reversed: ComparisonResult {
        switch self {
        case .orderedAscending: return .orderedDescending
        case .orderedDescending: return .orderedAscending
        case .orderedSame: return .orderedSame
        }
    }
}
