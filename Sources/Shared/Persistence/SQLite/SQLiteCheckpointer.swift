import CSQLite
import Foundation
import Synchronization

/// Runs a SQLite store's WAL checkpoints off the writer's commit path, on a thread and a connection of its own.
///
/// SQLite's automatic checkpoint (`wal_autocheckpoint`, 1,000 pages) runs inside the `COMMIT` that takes the WAL
/// past the threshold, on the writer's thread: three `fdatasync`s, and every save queued behind that commit waits
/// for them. `takeOverCheckpoints(of:)` installs this type's `sqlite3_wal_hook` on the writer's connection, which
/// replaces the autocheckpoint hook (a connection has one WAL hook; `sqlite3_wal_autocheckpoint` is itself a
/// wrapper around `sqlite3_wal_hook`). The hook runs on the writer's thread after each commit, with the WAL's
/// page count, and only signals; the checkpointer's thread then runs a `PASSIVE` checkpoint, which takes no lock
/// that the writer or the readers wait for. Only when commits come so fast that the checkpointer never copies the
/// whole WAL (which the WAL needs to restart) does the writer checkpoint itself, at `writerFallbackFactor`
/// thresholds. See `docs/persistence.md`, "Checkpoints".
final class SQLiteCheckpointer: Sendable {
    /// SQLite's default autocheckpoint threshold, in WAL pages (frames).
    static let defaultThresholdPages = 1_000
    /// How many thresholds the WAL may reach before the writer checkpoints itself: a writer that never pauses
    /// keeps the checkpointer from ever copying the whole WAL, and the WAL restarts only after that.
    static let writerFallbackFactor = 2

    /// WAL pages after a commit from which a checkpoint is requested; 0 never checkpoints (tests, measurements).
    let thresholdPages: Int
    /// The checkpointer's own connection: used on its thread only, closed by it when it stops (or by `stop()`
    /// when it was never started).
    private let connection: SQLiteConnection
    private let wakeUp = DispatchSemaphore(value: 0)
    private let stopped = DispatchSemaphore(value: 0)
    /// Set by the hook when it signals, cleared after the checkpoint: commits meanwhile signal no more.
    private let isRequested = Atomic<Bool>(false)
    private let isStopping = Atomic<Bool>(false)
    /// Whether the thread runs. It starts with the first checkpoint requested, so a store whose WAL never reaches
    /// the threshold (a short-lived one: a test's, a fuzz input's, a command's) never starts a thread.
    private let phase = Locked(Phase.idle)
    private enum Phase { case idle, running, stopped }
    /// Commits that reached this type's WAL hook (tests: the writer's commits go through it, not SQLite's own).
    let commitsSeen = Atomic<Int>(0)
    /// The WAL's size in pages after the last commit, as the hook was told.
    let lastWALPages = Atomic<Int>(0)
    /// The WAL's size in pages when the last checkpoint was requested; 0 after the WAL restarted.
    private let requestedAtPages = Atomic<Int>(0)
    /// When set, the thread waits on it before its next checkpoint (tests: a checkpointer that falls behind).
    private let gate = Locked<DispatchSemaphore?>(nil)
    private let counters = Locked(SQLiteStore.CheckpointStatistics())

    /// Opens the checkpointer's connection to the database at `path` (already in WAL mode).
    init(path: String, thresholdPages: Int, busyTimeoutMilliseconds: Int32) throws {
        precondition(thresholdPages >= 0, "thresholdPages must not be negative")
        self.thresholdPages = thresholdPages
        connection = try SQLiteConnection(
            path: path, readOnly: false, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        // A checkpoint syncs the WAL before copying it and the database after, unless synchronous is OFF: the
        // frames it copies are overwritten only once they are durable in the database.
        try connection.execute("PRAGMA synchronous=FULL")
    }

    /// Whether no checkpoint is requested or running.
    var isIdle: Bool { !isRequested.load(ordering: .acquiring) }

    /// The checkpoints run so far.
    var statistics: SQLiteStore.CheckpointStatistics { counters.withLock { $0 } }

    /// Makes `writer`'s commits signal this checkpointer instead of checkpointing themselves, and caps the size
    /// of the `-wal` file left after the WAL restarts.
    ///
    /// Call before any other thread uses `writer`. The hook holds this checkpointer unretained: keep it alive
    /// until `writer` is closed.
    func takeOverCheckpoints(of writer: SQLiteConnection) throws {
        let pageSize = try writer.integer("PRAGMA page_size") ?? 4_096
        try writer.execute("PRAGMA journal_size_limit=\(Self.journalSizeLimit(thresholdPages, pageSize: pageSize))")
        sqlite3_wal_hook(writer.handle, walCommitted, Unmanaged.passUnretained(self).toOpaque())
    }

    /// The `journal_size_limit` for a threshold: the largest WAL the writer's fallback lets grow, plus a threshold
    /// (frames with their 24-byte headers, and the 32-byte file header). The file is reused in place up to that
    /// size — a commit that extends the file makes its `fdatasync` journal the new size too — and only a WAL that
    /// grew past it (a checkpoint held back by a reader, a large save) is cut back when it restarts; -1 (no
    /// limit) when checkpoints are off.
    static func journalSizeLimit(_ thresholdPages: Int, pageSize: Int64) -> Int64 {
        guard thresholdPages > 0 else { return -1 }
        return Int64((writerFallbackFactor + 1) * thresholdPages) * (pageSize + 24) + 32
    }

    /// Whether the thread has started and not stopped.
    var isThreadRunning: Bool { phase.withLock { $0 == .running } }

    /// Starts the thread if it has not started and the checkpointer has not stopped; whether it runs.
    private func startThreadIfNeeded() -> Bool {
        let (runs, startsNow) = phase.withLock { phase -> (Bool, Bool) in
            switch phase {
            case .idle:
                phase = .running
                return (true, true)
            case .running: return (true, false)
            case .stopped: return (false, false)
            }
        }
        if startsNow {
            let thread = Thread { [self] in run() }
            thread.name = "ContextBus.SQLiteCheckpointer"
            thread.start()
        }
        return runs
    }

    /// Stops the thread after the checkpoint it is running, and closes the connection. Commits after this only
    /// reach a hook that does nothing; the writer's own close checkpoints what is left.
    func stop() {
        guard !isStopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        gate.withLock { gate in
            gate?.signal()
            gate = nil
        }
        let wasRunning = phase.withLock { phase -> Bool in
            defer { phase = .stopped }
            return phase == .running
        }
        if wasRunning {
            wakeUp.signal()
            stopped.wait()
        } else {
            connection.close()
        }
    }

    /// Called by the hook on the writer's thread after its commit: signals, and blocks only in the fallback.
    fileprivate func writerCommitted(walPages: Int, database: OpaquePointer?) {
        commitsSeen.add(1, ordering: .relaxed)
        lastWALPages.store(walPages, ordering: .relaxed)
        guard thresholdPages > 0, !isStopping.load(ordering: .relaxed) else { return }
        var requestedAt = requestedAtPages.load(ordering: .relaxed)
        if walPages < requestedAt {
            requestedAt = 0
            requestedAtPages.store(0, ordering: .relaxed)
        }
        if walPages >= Self.writerFallbackFactor * thresholdPages, let database {
            checkpointOnTheWriter(database)
            return
        }
        // Asks again only once the WAL grew by half a threshold since the last request: under a steady stream of
        // commits the checkpointer would otherwise run back to back.
        guard walPages >= thresholdPages, requestedAt == 0 || walPages >= requestedAt + thresholdPages / 2 else {
            return
        }
        guard !isRequested.exchange(true, ordering: .acquiringAndReleasing) else { return }
        requestedAtPages.store(walPages, ordering: .relaxed)
        if startThreadIfNeeded() { wakeUp.signal() }
    }

    /// The fallback, what SQLite's autocheckpoint does on every threshold: a `PASSIVE` checkpoint on the writer's
    /// connection, between its transactions, so no frame is appended while it copies and it can copy the whole
    /// WAL (unless a reader holds an old snapshot), so that the writer's next transaction restarts it. `PASSIVE`
    /// never waits: if the checkpointer's checkpoint is running it returns `SQLITE_BUSY` at once and the next
    /// commit tries again; `FULL` would wait up to the busy timeout for it and for readers. Rare: only while
    /// commits come faster than checkpoints finish.
    private func checkpointOnTheWriter(_ database: OpaquePointer) {
        var log: Int32 = -1
        var copied: Int32 = -1
        let code = sqlite3_wal_checkpoint_v2(database, nil, SQLITE_CHECKPOINT_PASSIVE, &log, &copied)
        requestedAtPages.store(0, ordering: .relaxed)
        counters.withLock { counters in
            counters.writerCheckpoints += 1
            if code & 0xff == SQLITE_BUSY { counters.busy += 1 } else if code != SQLITE_OK { counters.failures += 1 }
        }
    }

    /// Makes the thread wait before its next checkpoint until the returned function is called (tests).
    func hold() -> @Sendable () -> Void {
        let semaphore = DispatchSemaphore(value: 0)
        gate.withLock { $0 = semaphore }
        return { [self] in
            gate.withLock { $0 = nil }
            semaphore.signal()
        }
    }

    private func run() {
        while true {
            wakeUp.wait()
            if isStopping.load(ordering: .acquiring) { break }
            gate.withLock { $0 }?.wait()
            checkpoint()
            isRequested.store(false, ordering: .releasing)
        }
        connection.close()
        stopped.signal()
    }

    /// One passive checkpoint: copies what no reader still needs, never waits (the busy handler is not called in
    /// this mode); `SQLITE_BUSY` (it could not finish) is counted, and the next commit past the threshold asks
    /// again.
    private func checkpoint() {
        var log: Int32 = -1
        var copied: Int32 = -1
        let code = sqlite3_wal_checkpoint_v2(connection.handle, "main", SQLITE_CHECKPOINT_PASSIVE, &log, &copied)
        counters.withLock { counters in
            counters.checkpoints += 1
            switch code & 0xff {
            case SQLITE_OK:
                counters.framesCheckpointed += Int(max(copied, 0))
                counters.lastLogFrames = Int(log)
                counters.lastWasComplete = log >= 0 && copied == log
                if counters.lastWasComplete { counters.completeCheckpoints += 1 }
            case SQLITE_BUSY:
                // Could not finish (another checkpoint holds the lock, or not every frame could be copied).
                counters.busy += 1
                counters.framesCheckpointed += Int(max(copied, 0))
                counters.lastLogFrames = Int(log)
                counters.lastWasComplete = false
            default:
                counters.failures += 1
                counters.lastWasComplete = false
            }
        }
    }
}

/// The `sqlite3_wal_hook` callback: hands the WAL's page count to the checkpointer, returns at once.
private func walCommitted(
    context: UnsafeMutableRawPointer?, database: OpaquePointer?, name: UnsafePointer<CChar>?, pages: Int32
) -> Int32 {
    guard let context else { return SQLITE_OK }
    Unmanaged<SQLiteCheckpointer>.fromOpaque(context).takeUnretainedValue()
        .writerCommitted(walPages: Int(pages), database: database)
    return SQLITE_OK
}

extension SQLiteStore {
    /// Counters of the WAL checkpoints the store's checkpointer ran (see `docs/persistence.md`, "Checkpoints").
    public struct CheckpointStatistics: Sendable, Hashable {
        /// Passive checkpoints run (each one after the WAL passed the threshold).
        public var checkpoints = 0
        /// Checkpoints that copied the whole WAL back, so that the writer's next transaction restarts it.
        public var completeCheckpoints = 0
        /// Frames the checkpoints reported copied (a frame left by an unfinished checkpoint counts again).
        public var framesCheckpointed = 0
        /// Checkpoints the writer ran itself, after the WAL reached `writerFallbackFactor` thresholds.
        public var writerCheckpoints = 0
        /// Checkpoints that returned `SQLITE_BUSY`: they could not finish (another checkpoint held the lock, or
        /// not every frame could be copied); what they copied is counted above.
        public var busy = 0
        /// Checkpoints that failed otherwise.
        public var failures = 0
        /// The WAL's size in frames at the last checkpoint.
        public var lastLogFrames = 0
        /// Whether the last checkpoint copied the whole WAL as it was when it began.
        public var lastWasComplete = false
    }
}
