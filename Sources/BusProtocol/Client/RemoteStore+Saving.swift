import ContextBusObjectGraph
import ContextBusSupport
import ContextBusWire
import Dispatch
import Foundation

// `save`: one `store.save` that asks for the committed change set in its answer (`"changes": true`), so that the
// saving context gets the same `SaveResult` (permanent IDs, versions, change set) as from a local store, in one
// round trip and without working anything out on this side.

extension RemoteStore {
    /// Sends `request` as one `store.save` (its temporary IDs' references as `ref`s) and blocks the calling thread
    /// until the commit: `save(_:completion:)` waited for. See the type's notes on threads.
    ///
    /// - Throws: `StoreError.conflict` with the service's per-object details (policy `error`), `.notFound`,
    ///   `.validation` (inserts named by their temporary IDs), `.invalidRequest` naming the field,
    ///   `.unavailable`.
    public func save(_ request: SaveRequest) throws -> SaveResult {
        try waiting(for: StoreSave.name) { save(request, completion: $0) }
    }

    /// Sends `request` as one `store.save` without blocking; `completion` gets the result (with the committed
    /// change set) or a `StoreError` once the service answers, on the client's loop thread, so it must only hand
    /// work off.
    public func save(_ request: SaveRequest, completion: @escaping @Sendable (Result<SaveResult, any Error>) -> Void) {
        guard !request.isEmpty else {
            let txn = lastTransaction
            completion(
                .success(
                    SaveResult(
                        txn: txn, ids: [:], versions: [:],
                        changes: ChangeSet(
                            txn: txn, time: Date(), author: request.author, inserted: [], updated: [], deleted: []))))
            return
        }
        if let (i, insert) = request.inserts.enumerated().first(where: { !$0.element.id.isTemporary }) {
            completion(
                .failure(
                    StoreError.invalidRequest(
                        field: "insert[\(i)].id",
                        message: "\(insert.id) is permanent; storesvc assigns IDs to inserts, which must be temporary"))
            )
            return
        }
        var asking = request
        asking.includesChangesInAnswer = true
        client.call(StoreSave.self, asking, timeout: callTimeout, model: model) { [self] outcome in
            switch outcome {
            case .success(let result):
                noteTransaction(result.txn)
                completion(.success(result))
            case .failure(let error):
                completion(.failure(withInsertEntities(storeError(for: error), request: request)))
            }
        }
    }

    /// `store.batch`, blocking the calling thread until the commit. The change set reaches contexts through the
    /// store's change stream, like any other process's commit (`BatchResult.changes` is `nil`).
    @discardableResult
    public func batch(_ request: BatchRequest) throws -> BatchResult {
        try waiting(for: StoreBatch.name) { batch(request, completion: $0) }
    }

    /// `store.batch` without blocking; `completion` runs on the client's loop thread.
    public func batch(_ request: BatchRequest, completion: @escaping @Sendable (Result<BatchResult, any Error>) -> Void)
    {
        client.call(StoreBatch.self, request, timeout: callTimeout, model: model) { [self] outcome in
            switch outcome {
            case .success(let result):
                if let txn = result.txn { noteTransaction(txn) }
                completion(.success(result))
            case .failure(let error):
                completion(.failure(storeError(for: error)))
            }
        }
    }

    /// Blocks the calling thread until the call `start` makes completes (never on the client's own loop, which
    /// delivers the answer).
    private func waiting<T: Sendable>(
        for method: String, _ start: (@escaping @Sendable (Result<T, any Error>) -> Void) -> Void
    ) throws -> T {
        guard !client.loop.inEventLoop else {
            throw StoreError.unavailable(BusClientError.wouldBlockEventLoop(method: method).description)
        }
        let answered = DispatchSemaphore(value: 0)
        let outcome = Locked<Result<T, any Error>?>(nil)
        start { result in
            outcome.withLock { $0 = result }
            answered.signal()
        }
        answered.wait()
        return try outcome.withLock { $0 }!.get()
    }

    /// A validation error names inserts by `ref` only; gives them back the temporary IDs of the request.
    private func withInsertEntities(_ error: StoreError, request: SaveRequest) -> StoreError {
        guard case .validation(let failures) = error else { return error }
        let byRef = Dictionary(
            request.inserts.compactMap { insert in insert.id.temporaryReference.map { ($0, insert.id) } },
            uniquingKeysWith: { first, _ in first })
        return .validation(
            failures.map { failure in
                var failure = failure
                if let id = failure.id, id.entity.isEmpty, let ref = id.temporaryReference, let insert = byRef[ref] {
                    failure.id = insert
                }
                return failure
            })
    }
}
