/// The committed state of an object graph: what a top-level context saves into and fetches from.
///
/// Implementations: `SQLiteStore` (durable, group commit), `InMemoryStore` (same semantics,
/// nothing on disk) and, in `BusProtocol`, `RemoteStore` (talks to `storesvc`). Every method may
/// be called from any thread, concurrently; `save` blocks until its transaction is committed
/// (durably, unless the request asks for `.memory`), and concurrent saves are grouped into one
/// transaction where the implementation can (group commit).
public protocol PersistentStore: AnyObject, Sendable {
    /// The model the store was opened with.
    var model: Model { get }

    /// The number of the last committed transaction (0 before the first).
    var lastTransaction: Int64 { get }

    /// Runs a fetch against committed data.
    ///
    /// - Throws: `StoreError.invalidRequest` for an unknown entity or key, an unbound variable,
    ///   or a predicate that does not fit the model.
    func fetch(_ request: FetchRequest) throws -> StoreFetchResult

    /// The current snapshots of `ids`; IDs with no object are listed in `missing`.
    func objects(with ids: [ObjectID]) throws -> StoreObjectsResult

    /// Validates, checks versions, applies the merge policy and commits `request` as one
    /// transaction: all of it or none of it.
    ///
    /// - Throws: `StoreError.conflict` (policy `error`), `.notFound` (an update of a missing
    ///   object), `.validation`, `.invalidRequest`, or a storage error.
    func save(_ request: SaveRequest) throws -> SaveResult

    /// `save(_:)` without blocking the caller: queues `request` and calls `completion` exactly once with what
    /// `save(_:)` would have returned or thrown.
    ///
    /// For servers: many connections can have saves in flight without a thread parked on each. Saves queued from
    /// one thread are applied in the order they were queued. `completion` runs on a thread of the store's
    /// choosing (`SQLiteStore`: its writer's, right after the group's commit), so it must only hand work off.
    /// The default implementation calls `save(_:)` on the calling thread.
    func save(_ request: SaveRequest, completion: @escaping @Sendable (Result<SaveResult, any Error>) -> Void)

    /// Changes or deletes every object `request` matches, in one transaction: all of them or none (a batch runs
    /// as a save of those objects, with delete rules, validation, unique keys, history and change events).
    ///
    /// - Throws: `StoreError.invalidRequest` (unknown entity or key, a predicate that does not fit),
    ///   `.validation` (a value of the wrong type, a `deny` delete rule), `.conflict` (a unique key), or a storage
    ///   error. The default implementation runs it through `save(_:)`.
    @discardableResult
    func batch(_ request: BatchRequest) throws -> BatchResult

    /// `batch(_:)` without blocking the caller, as `save(_:completion:)`. The default runs it through
    /// `save(_:completion:)`.
    func batch(_ request: BatchRequest, completion: @escaping @Sendable (Result<BatchResult, any Error>) -> Void)

    /// Computes `request` over the committed objects it matches (docs/protocol.md, "store.aggregate").
    ///
    /// - Throws: `StoreError.invalidRequest` naming the field (an unknown key, a function on a key of the wrong
    ///   type, a predicate that does not fit). The default implementation fetches the matching objects and
    ///   computes in memory (`AggregateEvaluator`), which every implementation agrees with.
    func aggregate(_ request: AggregateRequest) throws -> AggregateResult

    /// What the store counts of its own work (commits, group sizes, store-specific counters), for `store.stats`.
    /// The default is empty.
    var counters: StoreCounters { get }

    /// Reserves `count` permanent IDs for new objects of `entity` (Core Data's
    /// `obtainPermanentIDs`); they may then be used as the IDs of inserts.
    func obtainPermanentIDs(entity: String, count: Int) throws -> [ObjectID]

    /// Committed transactions with `txn > since`, oldest first, at most `limit`.
    ///
    /// - Throws: `StoreError.historyUnavailable` when the history no longer reaches back to `since`.
    func history(since: Int64, limit: Int) throws -> [ChangeSet]

    /// Calls `observer` with every change set committed after this call, in `txn` order, on a
    /// thread of the store's choosing; never while a store lock is held.
    func observeChanges(_ observer: @escaping @Sendable (ChangeSet) -> Void) -> StoreObservation
}

extension PersistentStore {
    public func save(_ request: SaveRequest, completion: @escaping @Sendable (Result<SaveResult, any Error>) -> Void) {
        completion(Result { try save(request) })
    }

    public var counters: StoreCounters { StoreCounters() }

    public func aggregate(_ request: AggregateRequest) throws -> AggregateResult {
        let checked = try CheckedAggregate(request, model: model)
        let fetched = try fetch(
            FetchRequest(entity: request.entity, predicate: request.predicate, arguments: request.arguments))
        guard case .objects(let snapshots) = fetched.content else {
            return AggregateResult(txn: fetched.txn, groups: [])
        }
        return AggregateResult(txn: fetched.txn, groups: AggregateEvaluator(checked).groups(of: snapshots))
    }

    @discardableResult
    public func batch(_ request: BatchRequest) throws -> BatchResult {
        BatchResult(try save(SaveRequest(batch: request)))
    }

    public func batch(_ request: BatchRequest, completion: @escaping @Sendable (Result<BatchResult, any Error>) -> Void)
    {
        save(SaveRequest(batch: request)) { completion($0.map(BatchResult.init)) }
    }
}
