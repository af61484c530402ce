import CContextBusSQLite

/// The writer's part of a checkpoint: copying the rest of the WAL that the checkpointer's pass left behind.
///
/// A pass on the checkpointer's connection copies the WAL as it was when the pass began; the writer appends
/// meanwhile, so under a steady stream of commits a pass never copies all of it, and the WAL restarts only after
/// a checkpoint that did. Only a checkpoint between two of the writer's transactions can: nothing is appended
/// while it copies. SQLite's autocheckpoint runs it inside the `COMMIT` that took the WAL past the threshold — its
/// `fdatasync`s of the WAL (every frame since the last sync) and of the database (every page copied since the
/// last complete checkpoint) held that group's answers and events and every save queued behind it. Here the
/// writer runs it after a group's answers and events are handed off, when the checkpointer asks (its pass left
/// frames behind, and it synced them and the database, so the rest is small) and no save waits; or, when saves
/// always wait, once the WAL reaches `writerFallbackFactor` thresholds.
extension SQLiteCheckpointer {
    /// Completes the checkpoint on the writer's connection if one is due, between the writer's transactions
    /// (never inside one): the checkpointer asked for it and `savesWaiting()` is false (its rest is small: nobody
    /// waits long), or the WAL has reached `writerFallbackFactor` thresholds. Call on the writer's thread only,
    /// after the group's answers and events are handed off. Returns whether it ran a checkpoint.
    @discardableResult
    func completeOnTheWriter(_ database: OpaquePointer, savesWaiting: @autoclosure () -> Bool) -> Bool {
        guard thresholdPages > 0, !isStopping.load(ordering: .relaxed) else { return false }
        guard !isWALCopied.load(ordering: .acquiring) else { return false }
        let pages = lastWALPages.load(ordering: .relaxed)
        guard pages >= thresholdPages else { return false }
        let isForced = pages >= Self.writerFallbackFactor * thresholdPages
        // While the checkpointer's pass runs, the writer's checkpoint would find the checkpoint lock taken
        // (`SQLITE_BUSY`); the pass asks again when it ends.
        // `savesWaiting` (the writer's queue, under its lock) is asked last, only when a completion is wanted.
        guard isForced || (isCompletionWanted.load(ordering: .acquiring) && isIdle && !savesWaiting()) else {
            return false
        }
        checkpointOnTheWriter(database, insideCommit: false)
        return true
    }

    /// A `PASSIVE` checkpoint on the writer's connection, between its transactions (or, `insideCommit`, in the WAL
    /// hook of the commit that took the WAL to `commitFallbackFactor` thresholds): no frame is appended while it
    /// copies, so it copies the whole WAL (unless a reader holds an old snapshot), and the writer's next commit
    /// restarts it. `PASSIVE` never waits: if the checkpointer's pass is running it returns `SQLITE_BUSY` at once
    /// and the writer tries again after its next group; `FULL` would wait up to the busy timeout for it and for
    /// readers.
    func checkpointOnTheWriter(_ database: OpaquePointer, insideCommit: Bool) {
        if let hook = writerCheckpointHook.withLock({ $0 }) { hook(insideCommit) }
        var log: Int32 = -1
        var copied: Int32 = -1
        let code = sqlite3_wal_checkpoint_v2(database, nil, SQLITE_CHECKPOINT_PASSIVE, &log, &copied)
        let isComplete = code == SQLITE_OK && log >= 0 && copied == log
        if isComplete {
            isWALCopied.store(true, ordering: .releasing)
            isCompletionWanted.store(false, ordering: .releasing)
        }
        counters.withLock { counters in
            if insideCommit { counters.checkpointsInsideCommits += 1 } else { counters.writerCheckpoints += 1 }
            if isComplete { counters.completeWriterCheckpoints += 1 }
            if code & 0xff == SQLITE_BUSY { counters.busy += 1 } else if code != SQLITE_OK { counters.failures += 1 }
        }
    }
}
