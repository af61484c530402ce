/// A description of objects to fetch: Core Data's `NSFetchRequest`.
///
/// The same value serves a context (which adds its unsaved changes to the answer) and a store
/// (which answers from committed data only).
public struct FetchRequest: Sendable, Hashable {
    /// What a fetch returns.
    public enum ResultType: String, Sendable, Hashable {
        case objects
        case ids
        case count
    }

    public var entity: String
    public var predicate: ObjectPredicate?
    /// Values for the predicate's `$variables`.
    public var arguments: [String: PropertyValue]
    public var sortDescriptors: [ObjectSortDescriptor]
    public var fetchLimit: Int?
    public var fetchOffset: Int
    public var resultType: ResultType

    public init(
        entity: String, predicate: ObjectPredicate? = nil, arguments: [String: PropertyValue] = [:],
        sortDescriptors: [ObjectSortDescriptor] = [], fetchLimit: Int? = nil, fetchOffset: Int = 0,
        resultType: ResultType = .objects
    ) {
        self.entity = entity
        self.predicate = predicate
        self.arguments = arguments
        self.sortDescriptors = sortDescriptors
        self.fetchLimit = fetchLimit
        self.fetchOffset = fetchOffset
        self.resultType = resultType
    }
}

/// One sort key: a key path (attributes, optionally through to-one relationships) and a direction.
///
/// `nil` sorts before every value when ascending, after every value when descending; ties are
/// broken by object ID so that results are deterministic.
public struct ObjectSortDescriptor: Sendable, Hashable {
    public var keyPath: [String]
    public var ascending: Bool

    public init(_ key: String, ascending: Bool = true) {
        self.keyPath = key.split(separator: ".").map(String.init)
        self.ascending = ascending
    }
}
