import ContextBusObjectGraph
import ContextBusReactive
import ContextBusSupport
import ContextBusTransport
import ContextBusWire
import Dispatch
import Foundation

/// A `PersistentStore` served by `storesvc` over the bus: an `ObjectContext` or a `ContextStack` in any process
/// works on it unchanged, and merges the changes other processes commit automatically.
///
/// ```swift
/// let store = try await RemoteStore.open(socketPath: "/run/ctxbus/store.sock", clientName: "reporter")
/// let context = ObjectContext(store: store)
/// context.automaticallyMergesChanges = true
/// try await context.perform {
///     let reading = context.insert(entity: "Reading")
///     …
///     try context.save()
/// }
/// ```
///
/// ## Threads
///
/// `PersistentStore`'s methods are synchronous: each sends its request and **blocks the calling thread** (a
/// context's queue) until the answer comes. Answers are delivered on the `BusClient`'s event loop thread, never on
/// the blocked one, so calling from any queue is safe, but:
/// - never call them from Swift's cooperative pool (an `async` function, a `Task`): that parks one of its few
///   threads (two on a 2-CPU machine) for a round trip. Use `ObjectContext.perform`, which hops to the context's
///   queue, or `DispatchQueue.async`;
/// - calls made on the client's own event loop thread (inside a `BusClient` event observer) fail at once with
///   `StoreError.unavailable` instead of deadlocking.
///
/// ## Changes made elsewhere
///
/// At `open` the store subscribes to every entity (`store.subscribe` with `"toMany":"changes"`), unless opened
/// with `changeStream: .off` (a write-only client: no subscription, no events, and `observeChanges` observers are
/// never called). Each `store.changed` event becomes a `ChangeSet` delivered to `observeChanges` observers in
/// `txn` order, on the store's own serial queue, built from the event alone (no read back, no round trip). An updated object's snapshot
/// holds only its changed attributes and to-one relationships, as the event has them; its changed to-many keys are
/// in `changedKeys` with no value, and the members added and removed are given on the other side (a to-one
/// relationship's `previousValues`, a deleted object's snapshot): see `changeSet(for:)`. Contexts merge such
/// change sets into the objects they hold, keeping the values the event leaves out and applying to-many changes to
/// loaded members (`device.readings` gains a reading saved elsewhere without a fetch). Deleted objects carry only
/// their IDs, and those to-one values.
///
/// When the connection is lost the `BusClient` reconnects with backoff; the store then subscribes again with
/// `since` = the last transaction it delivered, so the transactions committed meanwhile are replayed: no gap, and
/// no duplicate (events at or below the last delivered `txn` are dropped). If the service's history no longer
/// reaches back that far (`410`), the store subscribes afresh and reports the gap in `changeStreamProblem`.
///
/// ## Errors
///
/// Every method throws `StoreError`: the service's answers as their store errors (conflicts and validation
/// failures with their per-object details), connection problems as `.unavailable` naming the socket.
///
/// ## A new model
///
/// The store reads the model once, at `open`, and names it (its version hash) in every call. When `storesvc` comes
/// back with another model (it migrated the database), every call fails with `StoreError.modelChanged` and the
/// change stream stops (`changeStreamProblem` says why): nothing is read or delivered under names the contexts do
/// not know. Open a new `RemoteStore` (and new contexts) to use the new model.
public final class RemoteStore: PersistentStore, CustomStringConvertible {
    /// The connection to `storesvc`.
    public let client: BusClient
    /// The model `storesvc` serves (`store.model` at `open`).
    public let model: Model
    /// How long a call may wait for its answer.
    public let callTimeout: Duration
    let state = Locked(State())
    /// Converts events and delivers change sets, in order; it blocks on `store.subscribe` (never the loop).
    let deliveryQueue = DispatchQueue(label: "remote-store.changes")

    struct State {
        var lastTransaction: Int64 = 0
        var subscription: Int64?
        var lastDeliveredTxn: Int64 = 0
        /// Set when an event could not be turned into a change set: later events are held back (dropped, to
        /// be replayed) until the store has subscribed again.
        var needsResubscribe = false
        var problem: String?
        var nextObserver = 0
        var observers: [Int: @Sendable (ChangeSet) -> Void] = [:]
        var disposables: [any Disposable] = []
        var isClosed = false
    }

    /// How a `RemoteStore` connects and waits.
    public struct Options: Sendable {
        /// The name sent in `bus.hello` (and the default `author` the service logs).
        public var clientName: String
        /// How long one call may wait for its answer before failing with `unavailable`.
        public var callTimeout: Duration
        /// Reconnection after a lost connection; `nil` stays disconnected (every later call fails).
        public var reconnect: BusClient.ReconnectPolicy?
        /// What saves, fetches and gets made while reconnecting do: wait for the service (the default; bounded by
        /// `callTimeout`, so that a save made while `storesvc` restarts goes through once it is back) or fail at
        /// once as `unavailable`.
        public var callsWhileReconnecting: BusClient.CallsWhileReconnecting = .wait
        /// The loop serving the connection; `nil` uses the process's shared client loop.
        public var eventLoop: EventLoop?
        /// Whether the store subscribes to the service's changes (`.on`, the default) or only reads and
        /// writes (`.off`: no `store.subscribe`, and `observeChanges` observers are never called).
        public var changeStream: ChangeStream

        public init(
            clientName: String = "remote-store", callTimeout: Duration = .seconds(30),
            reconnect: BusClient.ReconnectPolicy? = BusClient.ReconnectPolicy(), eventLoop: EventLoop? = nil,
            changeStream: ChangeStream = .on
        ) {
            self.clientName = clientName
            self.callTimeout = callTimeout
            self.reconnect = reconnect
            self.eventLoop = eventLoop
            self.changeStream = changeStream
        }
    }

    /// Whether a `RemoteStore` follows the changes other clients commit.
    public enum ChangeStream: Sendable, Hashable {
        /// Subscribe at `open` (and again after every reconnection); deliver change sets to `observeChanges`.
        case on
        /// Never subscribe: a store that only reads and writes, such as a recorder, costs the service no
        /// subscription and no events.
        case off
    }

    private init(client: BusClient, model: Model, callTimeout: Duration) {
        self.client = client
        self.model = model
        self.callTimeout = callTimeout
    }

    deinit {
        for disposable in state.withLock({ $0.disposables }) { disposable.dispose() }
        client.close()
    }

    public var description: String { "RemoteStore(\(client.socketPath))" }

    /// Connects to `storesvc` at `socketPath`, reads its model and subscribes to its changes (unless
    /// `options.changeStream` is `.off`).
    ///
    /// - Throws: `StoreError.unavailable` naming the socket when no service listens there or it refuses the
    ///   session.
    public static func open(socketPath: String, options: Options = Options()) async throws -> RemoteStore {
        var clientOptions = BusClient.Options(
            eventLoop: options.eventLoop, callTimeout: options.callTimeout, reconnect: options.reconnect)
        clientOptions.connectTimeout = min(options.callTimeout, .seconds(10))
        clientOptions.callsWhileReconnecting = options.callsWhileReconnecting
        let client: BusClient
        let model: Model
        do {
            client = try await BusClient.connect(to: socketPath, clientName: options.clientName, options: clientOptions)
        } catch {
            throw unavailable(error, path: socketPath)
        }
        do {
            model = try await client.call(StoreModel.self).model
        } catch {
            client.close()
            throw unavailable(error, path: socketPath)
        }
        client.model = model
        // Every call names the model: after a migration the service refuses them (412, `StoreError.modelChanged`)
        // rather than answer under names this store does not know.
        client.modelVersion = model.versionHash
        let store = RemoteStore(client: client, model: model, callTimeout: options.callTimeout)
        if options.changeStream == .on { try await store.startChangeStream() }
        return store
    }

    /// Opens the store, blocking the calling thread (never call it from the cooperative pool).
    public static func openAndWait(socketPath: String, options: Options = Options()) throws -> RemoteStore {
        let outcome = Locked<Result<RemoteStore, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let result: Result<RemoteStore, any Error>
            do {
                result = .success(try await open(socketPath: socketPath, options: options))
            } catch {
                result = .failure(error)
            }
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return try outcome.withLock { $0 }!.get()
    }

    /// Stops the change stream and closes the connection; later calls fail with `unavailable`.
    public func close() {
        let disposables = state.withLock { state -> [any Disposable] in
            state.isClosed = true
            state.observers = [:]
            defer { state.disposables = [] }
            return state.disposables
        }
        for disposable in disposables { disposable.dispose() }
        client.close()
    }

    // MARK: - PersistentStore

    public var lastTransaction: Int64 { state.withLock { $0.lastTransaction } }

    public func fetch(_ request: FetchRequest) throws -> StoreFetchResult {
        let answer = try call(StoreFetch.self, FetchParams(request))
        noteTransaction(answer.txn)
        return answer
    }

    /// `store.aggregate`; the answer's values typed with the model by the request's keys.
    public func aggregate(_ request: AggregateRequest) throws -> AggregateResult {
        let answer = try call(StoreAggregate.self, request)
        noteTransaction(answer.txn)
        return try typed { () throws(RPCError) in try answer.typed(for: request, model: model) }
    }

    public func objects(with ids: [ObjectID]) throws -> StoreObjectsResult {
        guard !ids.isEmpty else { return StoreObjectsResult(txn: lastTransaction, objects: [], missing: []) }
        let answer = try call(StoreGet.self, GetParams(ids: ids))
        noteTransaction(answer.txn)
        return answer
    }

    /// Not available: `storesvc` assigns permanent IDs when it commits an insert, and the protocol has no
    /// method to reserve them.
    ///
    /// - Throws: `StoreError.invalidRequest` always.
    public func obtainPermanentIDs(entity: String, count: Int) throws -> [ObjectID] {
        throw StoreError.invalidRequest(
            field: "obtainPermanentIDs",
            message: "storesvc assigns permanent IDs when it commits an insert; the protocol cannot reserve them")
    }

    /// `store.history`: the transactions after `since`. The wire gives IDs only, so the snapshots carry just
    /// their IDs (version 0, no values): contexts merging such a change set drop the deleted objects and ignore
    /// the rest (a version-0 snapshot is never newer than a registered object).
    public func history(since: Int64, limit: Int) throws -> [ChangeSet] {
        let answer = try call(StoreHistory.self, HistoryParams(since: since, limit: max(1, limit)))
        return answer.transactions.map { transaction in
            func bare(_ id: ObjectID) -> ObjectSnapshot { ObjectSnapshot(id: id, version: 0, values: [:]) }
            return ChangeSet(
                txn: transaction.txn, time: transaction.time, author: transaction.author,
                inserted: transaction.inserted.map(bare),
                updated: transaction.updated.map {
                    ChangeSet.Update(snapshot: bare($0), changedKeys: [], previousValues: [:])
                },
                deleted: transaction.deleted.map(bare))
        }
    }

    public func observeChanges(_ observer: @escaping @Sendable (ChangeSet) -> Void) -> StoreObservation {
        let token = state.withLock { state -> Int in
            state.nextObserver += 1
            state.observers[state.nextObserver] = observer
            return state.nextObserver
        }
        return StoreObservation { [weak self] in
            _ = self?.state.withLock { $0.observers.removeValue(forKey: token) }
        }
    }

    /// Why the change stream missed transactions, if it ever did (the service's history no longer reached back
    /// to the last delivered one after a reconnection); `nil` when nothing was missed.
    public var changeStreamProblem: String? { state.withLock { $0.problem } }

    /// The last transaction delivered to `observeChanges` observers.
    public var lastDeliveredTransaction: Int64 { state.withLock { $0.lastDeliveredTxn } }

    // MARK: - Calls

    /// Makes a blocking call and maps its failure to a `StoreError`.
    func call<M: RPCMethod>(_ method: M.Type, _ params: M.Params) throws(StoreError) -> M.Result {
        do {
            return try client.callAndWait(method, params, timeout: callTimeout, model: model)
        } catch {
            throw storeError(for: error)
        }
    }

    func storeError(for error: any Error) -> StoreError {
        switch error {
        case let error as RPCError: return StoreError(error, model: model, service: "storesvc at \(client.socketPath)")
        case let error as StoreError: return error
        default: return Self.unavailable(error, path: client.socketPath)
        }
    }

    static func unavailable(_ error: any Error, path: String) -> StoreError {
        switch error {
        case let error as StoreError: return error
        case let error as BusClientError:
            if case .malformedResult(let method, let reason) = error {
                return .unavailable(
                    "storesvc at \(path) answered \(method) with a value that does not fit its model: \(reason)")
            }
            return .unavailable(error.description)
        case let error as RPCError: return .unavailable("storesvc at \(path) answered \(error)")
        default: return .unavailable("storesvc at \(path): \(error)")
        }
    }

    /// Reads a result with the model; a result that does not fit it is the service's fault.
    func typed<T>(_ body: () throws(RPCError) -> T) throws(StoreError) -> T {
        do {
            return try body()
        } catch {
            throw .unavailable(
                "storesvc at \(client.socketPath) answered with a value that does not fit its model: \(error.message)")
        }
    }

    func noteTransaction(_ txn: Int64) {
        state.withLock { $0.lastTransaction = max($0.lastTransaction, txn) }
    }
}
