import ContextBusSupport

extension SQLiteStore {
    /// How long the writer's group commits took, `BEGIN` to `COMMIT`'s return: applying the group's saves,
    /// writing its WAL frames and, for a durable group, the `fdatasync` (storesvc's `ctxbus_store_commit_seconds`).
    package var commitLatency: LatencyHistogram.Snapshot { writerForSaves.commitLatency.snapshot }

    /// How long each sync of the WAL by the writer took: a durable group's `fdatasync`
    /// (storesvc's `ctxbus_store_wal_fsync_seconds`).
    package var walSyncLatency: LatencyHistogram.Snapshot { writerForSaves.walSyncLatency.snapshot }
}
