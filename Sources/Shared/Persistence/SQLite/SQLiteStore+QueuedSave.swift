import ContextBusObjectGraph

extension SQLiteStore {
    /// Queues `request` for the next group commit without blocking the caller; `completion` receives what
    /// `save(_:)` would have returned or thrown.
    ///
    /// This is `save(_:)` for servers: many connections can have saves in flight without a thread parked on each.
    /// Saves queued from one thread are applied in the order they were queued (a connection that queues its saves
    /// in arrival order gets them applied in that order). `completion` runs on the writer's thread, right after
    /// the group's commit (for `.disk`, once it is durable) and before the next group starts: it must only hand
    /// the answer off (storesvc's puts it on the connection's event loop), never block or do heavy work.
    public func save(_ request: SaveRequest, completion: @escaping @Sendable (Result<SaveResult, any Error>) -> Void) {
        guard !isClosedForSaves else {
            completion(.failure(StoreError.unavailable("the store is closed")))
            return
        }
        writerForSaves.submit(request, completion: completion)
    }

    /// The writer's group-commit counters and the checkpointer's, for `store.stats`.
    public var counters: StoreCounters {
        let statistics = self.statistics
        let checkpoints = checkpointStatistics
        return StoreCounters(
            commits: Int64(statistics.groups), groupSizes: statistics.groupSizes.mapValues { Int64($0) },
            named: [
                "largestGroup": Int64(statistics.largestGroup), "walFrames": Int64(statistics.walFrames),
                "walWrites": Int64(statistics.walWrites), "walCheckpoints": Int64(checkpoints.checkpoints),
                "walWriterCheckpoints": Int64(checkpoints.writerCheckpoints),
                "walCheckpointsInsideCommits": Int64(checkpoints.checkpointsInsideCommits),
                "walRestarts": Int64(checkpoints.walRestarts), "walLargestPages": Int64(checkpoints.largestWALPages),
                "durableTxn": durableTransaction, "durabilitySyncs": Int64(writerForSaves.durable.syncsMadeOnRequest),
            ])
    }
}
