import ContextBusReactive

/// A fetch request kept current in a context: Core Data's `NSFetchedResultsController`.
///
/// `updates` sends the result of the request (as object IDs, in sections), then, after every
/// save of the context, every save of one of its children into it and every change set it
/// merges (by hand or automatically), the new result with a `LiveQueryDiff` from the previous
/// one. Everything happens on the context's queue, so an observer may turn IDs into objects
/// there with `context.object(with:)` (the fetch has registered them, values loaded).
///
/// ```swift
/// let query = try LiveQuery(
///     FetchRequest(entity: "Device", sortDescriptors: [ObjectSortDescriptor("name")]),
///     in: stack.main, sectionKey: "name")
/// let disposable = query.updates.startWithValues { update in
///     guard let diff = update.diff else { return table.reload(update.snapshot) }
///     table.apply(diff)            // on main's queue
/// }
/// ```
///
/// Unsaved edits made in the context itself show up at its next save or merge (the fetch always
/// includes pending changes). With `sectionKey` the objects are grouped by that key path's value
/// (attributes, through to-one relationships); it must be the first sort key, so that each
/// section is one run of the sorted result and sections keep their order.
public struct LiveQuery: Sendable {
    /// The request kept current (its `resultType` is ignored: the query fetches objects).
    public let request: FetchRequest
    /// The context the query runs in.
    public let context: ObjectContext
    /// The key path grouping objects into sections, or `nil` for one section.
    public let sectionKey: String?

    /// A live query of `request` in `context`.
    ///
    /// - Throws: `LiveQueryError.sectionKeyNotFirstSortKey` when `sectionKey` is not the key of
    ///   the request's first sort descriptor.
    public init(_ request: FetchRequest, in context: ObjectContext, sectionKey: String? = nil) throws(LiveQueryError) {
        if let sectionKey {
            let path = sectionKey.split(separator: ".").map(String.init)
            guard let first = request.sortDescriptors.first, first.keyPath == path else {
                throw .sectionKeyNotFirstSortKey(
                    sectionKey: sectionKey, firstSortKey: request.sortDescriptors.first?.keyPath.joined(separator: "."))
            }
        }
        var request = request
        request.resultType = .objects
        self.request = request
        self.context = context
        self.sectionKey = sectionKey
    }

    /// The result now, then the result with a diff after each change that alters it, on the
    /// context's queue. Cold: each start fetches anew and keeps its own previous result. Fails
    /// when a fetch fails (`StoreError`); never completes by itself: dispose to stop.
    public var updates: Signal<LiveQueryUpdate, StoreError> {
        let query = self
        return Signal { observer, lifetime in
            let tracker = LiveQueryTracker(query: query, observer: observer, lifetime: lifetime)
            let context = query.context
            let saves = context.saves.add { tracker.noteChanges($0) }
            let events = context.childEvents.add { tracker.noteChanges($0.changes) }
            lifetime.observeEnded {
                saves.cancel()
                events.cancel()
            }
            context.perform { tracker.refresh() }
        }
    }
}

/// One value of `LiveQuery.updates`.
public struct LiveQueryUpdate: Sendable, Hashable {
    /// The result after the change.
    public var snapshot: LiveQuerySnapshot
    /// How the result changed since the previous update; `nil` for the first.
    public var diff: LiveQueryDiff?

    public init(snapshot: LiveQuerySnapshot, diff: LiveQueryDiff?) {
        self.snapshot = snapshot
        self.diff = diff
    }
}

/// Why a live query cannot be made.
public enum LiveQueryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Sections must follow the sort: the section key has to be the first sort key.
    case sectionKeyNotFirstSortKey(sectionKey: String, firstSortKey: String?)

    public var description: String {
        switch self {
        case .sectionKeyNotFirstSortKey(let sectionKey, let first):
            return
                "section key '\(sectionKey)' must be the first sort key (it is \(first.map { "'\($0)'" } ?? "missing"))"
        }
    }
}
