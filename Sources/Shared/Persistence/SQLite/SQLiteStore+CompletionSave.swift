import ContextBusObjectGraph
import Dispatch

extension SQLiteStore {
    /// Queues `request` for the next group commit without blocking the caller; `completion`
    /// receives what `save(_:)` would have returned or thrown.
    ///
    /// This is `save(_:)` for servers: many connections can have saves in flight without a
    /// thread parked on each. Saves queued from one thread are applied in the order they were
    /// queued (a connection that queues its saves in arrival order gets them applied in that
    /// order). `completion` runs on `completionQueue` (by default a global concurrent queue),
    /// never on the writer's queue, so a slow completion cannot hold up the next group commit.
    ///
    /// - Parameters:
    ///   - request: the change set to commit.
    ///   - completionQueue: where `completion` is called.
    ///   - completion: called exactly once, with the result or the error.
    public func save(
        _ request: SaveRequest, completionQueue: DispatchQueue = .global(),
        completion: @escaping @Sendable (Result<SaveResult, any Error>) -> Void
    ) {
        guard !isClosedForSaves else {
            completionQueue.async { completion(.failure(StoreError.unavailable("the store is closed"))) }
            return
        }
        writerForSaves.submit(request) { result in
            completionQueue.async { completion(result) }
        }
    }
}
