/// Aggregates over the objects of one entity that a predicate matches, optionally grouped by keys and by fixed
/// date windows: Core Data's fetch with `NSExpression`s and `propertiesToGroupBy`, answered by the store
/// (docs/protocol.md, "store.aggregate").
///
/// ```swift
/// let hourly = AggregateRequest(
///     entity: "Reading", groupBy: ["device"], bucket: .init(key: "time", seconds: 3600),
///     values: ["n": .count, "mean": .average("number")])
/// ```
public struct AggregateRequest: Sendable, Hashable {
    /// One value computed per group.
    public enum Function: Sendable, Hashable, CustomStringConvertible {
        /// The number of objects.
        case count
        /// The number of objects whose `key` is not `null`.
        case countOf(String)
        /// The sum of `key` (int or double; keeps the attribute's type; `null` over no values).
        case sum(String)
        /// The mean of `key` (int or double), as a double; `null` over no values.
        case average(String)
        /// The least value of `key` (int, double, date or string).
        case minimum(String)
        /// The greatest value of `key` (int, double, date or string).
        case maximum(String)

        /// The key the function reads, if any.
        public var key: String? {
            switch self {
            case .count: return nil
            case .countOf(let key), .sum(let key), .average(let key), .minimum(let key), .maximum(let key): return key
            }
        }

        /// The wire spelling: `count`, `count:key`, `sum:key`, `avg:key`, `min:key`, `max:key`.
        public var description: String {
            switch self {
            case .count: return "count"
            case .countOf(let key): return "count:\(key)"
            case .sum(let key): return "sum:\(key)"
            case .average(let key): return "avg:\(key)"
            case .minimum(let key): return "min:\(key)"
            case .maximum(let key): return "max:\(key)"
            }
        }

        /// Reads the wire spelling; `nil` when it is none of them.
        public init?(_ text: String) {
            if text == "count" {
                self = .count
                return
            }
            let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[1].isEmpty else { return nil }
            switch parts[0] {
            case "count": self = .countOf(parts[1])
            case "sum": self = .sum(parts[1])
            case "avg": self = .average(parts[1])
            case "min": self = .minimum(parts[1])
            case "max": self = .maximum(parts[1])
            default: return nil
            }
        }
    }

    /// Fixed windows of a date attribute, aligned to the Unix epoch.
    public struct Bucket: Sendable, Hashable {
        public var key: String
        public var seconds: Int64

        public init(key: String, seconds: Int64) {
            self.key = key
            self.seconds = seconds
        }
    }

    public var entity: String
    public var predicate: ObjectPredicate?
    /// Values for the predicate's `$variables`.
    public var arguments: [String: PropertyValue]
    /// Attributes or to-one relationships whose values make the groups, in order.
    public var groupBy: [String]
    public var bucket: Bucket?
    /// The values computed per group, by name.
    public var values: [String: Function]

    public init(
        entity: String, where predicate: ObjectPredicate? = nil, arguments: [String: PropertyValue] = [:],
        groupBy: [String] = [], bucket: Bucket? = nil, values: [String: Function]
    ) {
        self.entity = entity
        self.predicate = predicate
        self.arguments = arguments
        self.groupBy = groupBy
        self.bucket = bucket
        self.values = values
    }

    /// The keys of a group, in order: `groupBy`, then the bucket's key.
    public var groupKeys: [String] { groupBy + (bucket.map { [$0.key] } ?? []) }
}
