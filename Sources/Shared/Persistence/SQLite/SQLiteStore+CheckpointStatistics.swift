extension SQLiteStore {
    /// Counters of the WAL checkpoints the store's checkpointer ran (see `docs/persistence.md`, "Checkpoints").
    public struct CheckpointStatistics: Sendable, Hashable {
        /// Passive checkpoints the checkpointer's thread ran (each one after the WAL passed the threshold).
        public var checkpoints = 0
        /// The thread's checkpoints that copied the whole WAL back, as the writer's last commit left it, so that
        /// the writer's next transaction restarts it.
        public var completeCheckpoints = 0
        /// Frames the thread's checkpoints reported copied (a frame left by an unfinished checkpoint counts again).
        public var framesCheckpointed = 0
        /// Database `fdatasync`s the thread ran after a checkpoint that left frames behind (SQLite syncs the
        /// database only after one that copied everything).
        public var databaseSyncs = 0
        /// Checkpoints the writer ran between its transactions, after a group's answers, to copy what the
        /// thread left behind.
        public var writerCheckpoints = 0
        /// The writer's checkpoints (both kinds) that copied the whole WAL.
        public var completeWriterCheckpoints = 0
        /// Checkpoints the writer ran inside a commit, the last resort when one group took the WAL to
        /// `commitFallbackFactor` thresholds.
        public var checkpointsInsideCommits = 0
        /// Commits that restarted the WAL from its beginning.
        public var walRestarts = 0
        /// The largest WAL, in pages, that a commit left.
        public var largestWALPages = 0
        /// Checkpoints that returned `SQLITE_BUSY`: another checkpoint held the lock.
        public var busy = 0
        /// Checkpoints that failed otherwise.
        public var failures = 0
        /// The WAL's size in frames at the thread's last checkpoint.
        public var lastLogFrames = 0
        /// Whether the thread's last checkpoint copied the whole WAL, as the writer's last commit left it.
        public var lastWasComplete = false
    }
}
