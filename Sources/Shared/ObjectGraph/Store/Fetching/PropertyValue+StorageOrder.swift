import ContextBusSupport
import Foundation

extension PropertyValue {
    /// Compares two stored values the way SQLite's `ORDER BY` compares their columns: `null`
    /// first, then numbers (bool, int, double, date), then text (string, uuid, json) by UTF-8
    /// bytes, then binary by bytes. Returns a negative number, zero or a positive number.
    package static func storageOrder(_ lhs: PropertyValue, _ rhs: PropertyValue) -> Int {
        let (lhsClass, rhsClass) = (lhs.storageClass, rhs.storageClass)
        guard lhsClass == rhsClass else { return lhsClass < rhsClass ? -1 : 1 }
        switch (lhs, rhs) {
        case (.null, .null): return 0
        case (.int(let a), .int(let b)): return a < b ? -1 : (a == b ? 0 : 1)
        case (.binary(let a), .binary(let b)): return compareBytes(a, b)
        default:
            if lhsClass == 1, let a = lhs.numericValue, let b = rhs.numericValue {
                return a < b ? -1 : (a == b ? 0 : 1)
            }
            return compareBytes(Array(lhs.storageText.utf8), Array(rhs.storageText.utf8))
        }
    }

    /// SQLite's storage class order: NULL < numeric < TEXT < BLOB.
    private var storageClass: Int {
        switch self {
        case .null: return 0
        case .int, .double, .bool, .date, .reference: return 1
        case .string, .uuid, .json, .references: return 2
        case .binary: return 3
        }
    }

    private var numericValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        case .bool(let b): return b ? 1 : 0
        case .date(let d): return d.timeIntervalSince1970
        case .reference(let id): return id.number.map(Double.init)
        default: return nil
        }
    }

    /// The text a TEXT column holds for this value.
    private var storageText: String {
        switch self {
        case .string(let s): return s
        case .uuid(let u): return u.uuidString.lowercased()
        // Validation keeps NaN and infinities out of stores; a pending value holding one has no stored text.
        case .json(let j): return (try? JSONWriter(sortsKeys: true).string(j)) ?? "null"
        default: return description
        }
    }

    private static func compareBytes<C: Collection<UInt8>>(_ a: C, _ b: C) -> Int {
        for (x, y) in zip(a, b) where x != y { return x < y ? -1 : 1 }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }
}
