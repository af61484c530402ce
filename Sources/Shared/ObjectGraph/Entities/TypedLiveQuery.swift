import ContextBusReactive

/// A typed fetch request kept current in a context: `LiveQuery` (Core Data's `NSFetchedResultsController`) whose
/// updates give `Entity` values.
///
/// ```swift
/// let query = try TypedLiveQuery(Device.fetchRequest(sortedBy: [.name]), in: stack.main, sectionedBy: .name)
/// let disposable = query.updates.startWithValues { update in      // on main's queue
///     for device in update.objects { print(device.address) }
///     guard let diff = update.diff else { return reload() }
///     apply(diff)
/// }
/// ```
public struct TypedLiveQuery<Entity: ManagedEntity>: Sendable {
    /// The dynamic live query underneath.
    public let query: LiveQuery

    /// A live query of `request` in `context`, grouped in sections by `sectionKey`'s value when given.
    ///
    /// - Throws: `LiveQueryError.sectionKeyNotFirstSortKey` when `sectionKey` is not the request's first sort key.
    public init(
        _ request: TypedFetchRequest<Entity>, in context: ObjectContext, sectionedBy sectionKey: SortKey<Entity>? = nil
    ) throws(LiveQueryError) {
        query = try LiveQuery(request.request, in: context, sectionKey: sectionKey?.keyPath)
    }

    /// The context the query runs in.
    public var context: ObjectContext { query.context }

    /// The result now, then after each change that alters it, on the context's queue (`LiveQuery.updates`).
    public var updates: Signal<TypedLiveQueryUpdate<Entity>, StoreError> {
        let context = query.context
        return query.updates.map { TypedLiveQueryUpdate(update: $0, context: context) }
    }
}

/// One value of `TypedLiveQuery.updates`: the snapshot and diff of `LiveQueryUpdate`, and the objects they name.
///
/// The objects are materialised in the query's context, so `objects`, `sections` and `object(at:)` are read on its
/// queue (where the updates are delivered); the fetch has registered them with their values loaded.
public struct TypedLiveQueryUpdate<Entity: ManagedEntity>: Sendable {
    /// The dynamic update: object IDs in sections, and the diff from the previous result.
    public let update: LiveQueryUpdate
    /// The query's context.
    public let context: ObjectContext

    /// The result after the change, as IDs.
    public var snapshot: LiveQuerySnapshot { update.snapshot }
    /// How the result changed since the previous update; `nil` for the first.
    public var diff: LiveQueryDiff? { update.diff }

    /// Every object of the result, in order (on the context's queue).
    public var objects: [Entity] { context.objects(with: snapshot.objectIDs, as: Entity.self) }

    /// The sections of the result, each with its name (its section key's value) and objects (on the context's
    /// queue).
    public var sections: [(name: String, objects: [Entity])] {
        snapshot.sections.map { ($0.name, context.objects(with: $0.objectIDs, as: Entity.self)) }
    }

    /// The object at `path` (on the context's queue).
    public func object(at path: LiveQueryIndexPath) -> Entity {
        context.object(with: snapshot[path], as: Entity.self)
    }
}
