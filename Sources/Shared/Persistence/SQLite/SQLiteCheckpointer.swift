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
/// that the writer or the readers wait for. See `docs/persistence.md`, "Checkpoints".
final class SQLiteCheckpointer: Sendable {
    /// SQLite's default autocheckpoint threshold, in WAL pages (frames).
    static let defaultThresholdPages = 1_000

    /// WAL pages after a commit from which a checkpoint is requested; 0 never checkpoints (tests, measurements).
    let thresholdPages: Int
    /// The checkpointer's own connection: used on its thread only, closed by it when it stops (or by `stop()`
    /// when it was never started).
    private let connection: SQLiteConnection
    private let wakeUp = DispatchSemaphore(value: 0)
    private let stopped = DispatchSemaphore(value: 0)
    /// Set by the hook when it signals, cleared after the checkpoint: commits meanwhile signal no more.
    private let isRequested = Atomic<Bool>(false)
    private let isStarted = Atomic<Bool>(false)
    private let isStopping = Atomic<Bool>(false)
    /// Commits that reached this type's WAL hook (tests: the writer's commits go through it, not SQLite's own).
    let commitsSeen = Atomic<Int>(0)
    /// The WAL's size in pages after the last commit, as the hook was told.
    let lastWALPages = Atomic<Int>(0)
    private let counters = Mutex(SQLiteStore.CheckpointStatistics())

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

    /// The `journal_size_limit` for a threshold: twice the WAL a checkpoint is requested at (frames with their
    /// 24-byte headers, and the 32-byte file header), so that the file is reused in place at its usual size and
    /// only a WAL that grew past it (a checkpoint held back by a reader, a large save) is cut back when it
    /// restarts; -1 (no limit) when checkpoints are off.
    static func journalSizeLimit(_ thresholdPages: Int, pageSize: Int64) -> Int64 {
        thresholdPages > 0 ? 2 * Int64(thresholdPages) * (pageSize + 24) + 32 : -1
    }

    /// Starts the checkpointer's thread.
    func start() {
        guard !isStarted.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let thread = Thread { [self] in run() }
        thread.name = "ContextBus.SQLiteCheckpointer"
        thread.start()
    }

    /// Stops the thread after the checkpoint it is running, and closes the connection. Commits after this only
    /// reach a hook that does nothing; the writer's own close checkpoints what is left.
    func stop() {
        guard !isStopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        if isStarted.load(ordering: .acquiring) {
            wakeUp.signal()
            stopped.wait()
        } else {
            connection.close()
        }
    }

    /// Called by the hook on the writer's thread inside its commit: must not block.
    fileprivate func writerCommitted(walPages: Int) {
        commitsSeen.add(1, ordering: .relaxed)
        lastWALPages.store(walPages, ordering: .relaxed)
        guard thresholdPages > 0, walPages >= thresholdPages, !isStopping.load(ordering: .relaxed) else { return }
        guard !isRequested.exchange(true, ordering: .acquiringAndReleasing) else { return }
        wakeUp.signal()
    }

    private func run() {
        while true {
            wakeUp.wait()
            if isStopping.load(ordering: .acquiring) { break }
            checkpoint()
            isRequested.store(false, ordering: .releasing)
        }
        connection.close()
        stopped.signal()
    }

    /// One passive checkpoint: copies what no reader still needs, never waits (the busy handler is not called in
    /// this mode); `SQLITE_BUSY` means another checkpoint was running, and is counted.
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
            case SQLITE_BUSY, SQLITE_LOCKED:
                counters.busy += 1
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
    Unmanaged<SQLiteCheckpointer>.fromOpaque(context).takeUnretainedValue().writerCommitted(walPages: Int(pages))
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
        /// Checkpoints that found another checkpoint running (`SQLITE_BUSY`).
        public var busy = 0
        /// Checkpoints that failed otherwise.
        public var failures = 0
        /// The WAL's size in frames at the last checkpoint.
        public var lastLogFrames = 0
        /// Whether the last checkpoint copied the whole WAL as it was when it began.
        public var lastWasComplete = false
    }
}
