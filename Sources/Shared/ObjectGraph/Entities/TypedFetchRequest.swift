/// A fetch request for objects of entity `Entity`: Core Data's `NSFetchRequest<Device>`, on top of the dynamic
/// `FetchRequest` (`request`), which is what contexts and stores run.
///
/// ```swift
/// let request = try Reading.fetchRequest(
///     where: "value > $min AND device.name BEGINSWITH 'th'", ["min": .int(20)],
///     sortedBy: [.time.descending], limit: 10)
/// let readings: [Reading] = try context.fetch(request)
/// ```
public struct TypedFetchRequest<Entity: ManagedEntity>: Sendable, Hashable {
    /// The dynamic request underneath (its `entity` is `Entity.entityName`).
    public var request: FetchRequest

    /// A request for `Entity`'s objects that match `predicate` (all when `nil`), in the order of `sortKeys`.
    public init(
        predicate: ObjectPredicate? = nil, arguments: [String: PropertyValue] = [:],
        sortedBy sortKeys: [SortKey<Entity>] = [],
        limit: Int? = nil, offset: Int = 0
    ) {
        request = FetchRequest(
            entity: Entity.entityName, predicate: predicate, arguments: arguments,
            sortDescriptors: sortKeys.map(\.descriptor), fetchLimit: limit, fetchOffset: offset)
    }

    /// A request with a predicate in NSPredicate's format (`docs/predicates.md`), its `$variables` bound from
    /// `arguments`.
    ///
    /// - Throws: `PredicateSyntaxError` when `format` does not parse (the context checks the keys when it runs).
    public init(
        where format: String, _ arguments: [String: PropertyValue] = [:], sortedBy sortKeys: [SortKey<Entity>] = [],
        limit: Int? = nil, offset: Int = 0
    ) throws(PredicateSyntaxError) {
        self.init(
            predicate: try ObjectPredicate(format: format), arguments: arguments, sortedBy: sortKeys, limit: limit,
            offset: offset)
    }

    /// The predicate (`nil`: every object of the entity).
    public var predicate: ObjectPredicate? {
        get { request.predicate }
        set { request.predicate = newValue }
    }

    /// Values for the predicate's `$variables`.
    public var arguments: [String: PropertyValue] {
        get { request.arguments }
        set { request.arguments = newValue }
    }

    /// The order of the result.
    public var sortKeys: [SortKey<Entity>] {
        get { request.sortDescriptors.map { SortKey(descriptor: $0) } }
        set { request.sortDescriptors = newValue.map(\.descriptor) }
    }

    /// At most this many objects (`nil`: no limit).
    public var limit: Int? {
        get { request.fetchLimit }
        set { request.fetchLimit = newValue }
    }

    /// Objects skipped before the first one returned.
    public var offset: Int {
        get { request.fetchOffset }
        set { request.fetchOffset = newValue }
    }
}

extension SortKey {
    init(descriptor: ObjectSortDescriptor) {
        self.descriptor = descriptor
    }
}

extension ManagedEntity {
    /// A request for every object of this entity, in the order of `sortKeys` (Core Data's `fetchRequest()`).
    public static func fetchRequest(
        sortedBy sortKeys: [SortKey<Self>] = [], limit: Int? = nil, offset: Int = 0
    ) -> TypedFetchRequest<Self> {
        TypedFetchRequest(sortedBy: sortKeys, limit: limit, offset: offset)
    }

    /// A request for the objects of this entity that match `format` (NSPredicate's syntax, with `$variables`
    /// from `arguments`), in the order of `sortKeys`.
    ///
    /// - Throws: `PredicateSyntaxError` when `format` does not parse.
    public static func fetchRequest(
        where format: String, _ arguments: [String: PropertyValue] = [:], sortedBy sortKeys: [SortKey<Self>] = [],
        limit: Int? = nil, offset: Int = 0
    ) throws(PredicateSyntaxError) -> TypedFetchRequest<Self> {
        try TypedFetchRequest(where: format, arguments, sortedBy: sortKeys, limit: limit, offset: offset)
    }
}
