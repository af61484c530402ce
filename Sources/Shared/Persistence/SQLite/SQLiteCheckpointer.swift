import CContextBusSQLite
import ContextBusSupport
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
/// that the writer or the readers wait for.
///
/// The WAL restarts only after a checkpoint copied all of it before the writer began its transaction, and under a
/// steady stream of commits the thread's pass never does (frames are appended while it copies). So after an
/// unfinished pass the thread runs up to two more and syncs the database, and after every pass it asks the
/// writer to copy the small rest itself, between groups, once their answers are handed off and no save waits
/// (`completeOnTheWriter(_:savesWaiting:)`, in `SQLiteCheckpointer+Writer.swift`). See `docs/persistence.md`,
/// "Checkpoints".
final class SQLiteCheckpointer: Sendable {
    /// SQLite's default autocheckpoint threshold, in WAL pages (frames).
    static let defaultThresholdPages = 1_000
    /// How many thresholds the WAL may reach before the writer completes the checkpoint after a group even with
    /// saves waiting (a writer that never pauses).
    static let writerFallbackFactor = 2
    /// How many thresholds the WAL may reach before the writer checkpoints inside the commit that took it there:
    /// the last resort, for a WAL that grew by more than two thresholds in one group.
    static let commitFallbackFactor = 4

    /// WAL pages after a commit from which a checkpoint is requested; 0 never checkpoints (tests, measurements).
    let thresholdPages: Int
    /// The checkpointer's own connection: used on its thread only, closed by it when it stops (or by `stop()`
    /// when it was never started).
    private let connection: SQLiteConnection
    private let wakeUp = DispatchSemaphore(value: 0)
    private let stopped = DispatchSemaphore(value: 0)
    /// Set by the hook when it signals, cleared after the pass: commits meanwhile signal no more.
    private let isRequested = Atomic<Bool>(false)
    let isStopping = Atomic<Bool>(false)
    /// Whether the thread runs. It starts with the first checkpoint requested, so a store whose WAL never reaches
    /// the threshold (a short-lived one: a test's, a fuzz input's, a command's) never starts a thread.
    private let phase = Locked(Phase.idle)
    private enum Phase { case idle, running, stopped }
    /// Commits that reached this type's WAL hook (tests: the writer's commits go through it, not SQLite's own).
    let commitsSeen = Atomic<Int>(0)
    /// The WAL's size in pages after the last commit, as the hook was told.
    let lastWALPages = Atomic<Int>(0)
    /// The WAL's size in pages when the last pass was requested; 0 after the WAL restarted.
    let requestedAtPages = Atomic<Int>(0)
    /// Set by the thread after each pass: the writer should copy the rest (if any) between groups, so that its
    /// next transaction restarts the WAL. Cleared when the writer's checkpoint copies the whole WAL, and when the
    /// WAL restarts.
    let isCompletionWanted = Atomic<Bool>(false)
    /// Set when a checkpoint copied the whole WAL, cleared by the next commit (which restarts the WAL): until
    /// then there is nothing to complete.
    let isWALCopied = Atomic<Bool>(false)
    /// Called on the thread after each pass (the store makes the writer complete it when idle).
    let completionWanted = Locked<(@Sendable () -> Void)?>(nil)
    /// When set, called on the writer's thread just before each checkpoint the writer runs, with whether it runs
    /// inside a commit (tests).
    let writerCheckpointHook = Locked<(@Sendable (_ insideCommit: Bool) -> Void)?>(nil)
    /// When set, the thread waits on it before its next checkpoint (tests: a checkpointer that falls behind).
    private let gate = Locked<DispatchSemaphore?>(nil)
    let counters = Locked(SQLiteStore.CheckpointStatistics())
    /// Commits that restarted the WAL from its beginning (kept apart from `counters`: the hook takes no lock).
    private let walRestarts = Atomic<Int>(0)
    /// The largest WAL, in pages, that a commit reported.
    private let largestWALPages = Atomic<Int>(0)

    /// Opens the checkpointer's connection to the database at `path` (already in WAL mode).
    init(path: String, thresholdPages: Int, busyTimeoutMilliseconds: Int32) throws {
        precondition(thresholdPages >= 0, "thresholdPages must not be negative")
        self.thresholdPages = thresholdPages
        connection = try SQLiteConnection(
            path: path, readOnly: false, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        // A checkpoint syncs the WAL before copying it and the database after, unless synchronous is OFF: the
        // frames it copies are overwritten only once they are durable in the database.
        try connection.execute("PRAGMA synchronous=FULL")
        Self.growInChunks(connection)
    }

    /// The database file grows and shrinks in steps of this many bytes (`SQLITE_FCNTL_CHUNK_SIZE`).
    static let chunkBytes: Int32 = 1 << 20

    /// Makes `connection`'s database file grow in `chunkBytes` steps: a checkpoint that copies new pages then
    /// rarely changes the file's size, so that its `fdatasync` has only data to write, not the inode's size
    /// (a journal commit of the file system). Every connection that checkpoints needs it: SQLite cuts the file
    /// back to the database's size (rounded up to a chunk when set) after a complete checkpoint.
    static func growInChunks(_ connection: SQLiteConnection) {
        var bytes = chunkBytes
        _ = sqlite3_file_control(connection.handle, "main", SQLITE_FCNTL_CHUNK_SIZE, &bytes)
    }

    /// How much the WAL must grow after a pass was requested before the hook requests another: a quarter
    /// threshold, so that while the writer cannot complete (saves always waiting) the thread keeps close behind
    /// it and the rest left to the writer stays small.
    var passStepPages: Int { max(thresholdPages / 4, 1) }

    /// Whether no pass is requested or running.
    var isIdle: Bool { !isRequested.load(ordering: .acquiring) }

    /// The checkpoints run so far.
    var statistics: SQLiteStore.CheckpointStatistics {
        var statistics = counters.withLock { $0 }
        statistics.walRestarts = walRestarts.load(ordering: .relaxed)
        statistics.largestWALPages = largestWALPages.load(ordering: .relaxed)
        return statistics
    }

    /// Makes `writer`'s commits signal this checkpointer instead of checkpointing themselves, and caps the size
    /// of the `-wal` file left after the WAL restarts.
    ///
    /// Call before any other thread uses `writer`. The hook holds this checkpointer unretained: keep it alive
    /// until `writer` is closed.
    func takeOverCheckpoints(of writer: SQLiteConnection) throws {
        let pageSize = try writer.integer("PRAGMA page_size") ?? 4_096
        try writer.execute("PRAGMA journal_size_limit=\(Self.journalSizeLimit(thresholdPages, pageSize: pageSize))")
        Self.growInChunks(writer)
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
    /// reach a hook that does nothing, and the writer completes no more; its own close checkpoints what is left.
    func stop() {
        guard !isStopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        completionWanted.withLock { $0 = nil }
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

    /// Called by the hook on the writer's thread after its commit: records and signals; it checkpoints itself
    /// only in the last resort (`commitFallbackFactor`).
    fileprivate func writerCommitted(walPages: Int, database: OpaquePointer?) {
        commitsSeen.add(1, ordering: .relaxed)
        let previous = lastWALPages.exchange(walPages, ordering: .relaxed)
        // Every commit appends frames: whatever was copied before, the WAL is not copied whole any more.
        isWALCopied.store(false, ordering: .releasing)
        if walPages < previous {
            // The commit restarted the WAL from its beginning.
            requestedAtPages.store(0, ordering: .relaxed)
            isCompletionWanted.store(false, ordering: .releasing)
            walRestarts.add(1, ordering: .relaxed)
        }
        largestWALPages.max(walPages, ordering: .relaxed)
        guard thresholdPages > 0, !isStopping.load(ordering: .relaxed) else { return }
        if walPages >= Self.commitFallbackFactor * thresholdPages, let database {
            checkpointOnTheWriter(database, insideCommit: true)
            return
        }
        let requestedAt = requestedAtPages.load(ordering: .relaxed)
        guard walPages >= thresholdPages, requestedAt == 0 || walPages >= requestedAt + passStepPages else { return }
        guard !isRequested.exchange(true, ordering: .acquiringAndReleasing) else { return }
        requestedAtPages.store(walPages, ordering: .relaxed)
        if startThreadIfNeeded() { wakeUp.signal() }
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
            // Passes back to back while each one copies something and leaves frames (those the writer appended
            // during the one before): the rest left to the writer shrinks from a pass's worth of commits to a
            // short pass's.
            var pass = checkpoint(after: nil)
            var extraPasses = 0
            while pass.leftFrames, pass.madeProgress, extraPasses < Self.extraPasses,
                !isStopping.load(ordering: .acquiring)
            {
                pass = checkpoint(after: pass)
                extraPasses += 1
            }
            isRequested.store(false, ordering: .releasing)
            // Even a pass that copied everything asks: a transaction the writer began during the pass (on the
            // WAL as it was) does not restart it, and the ones after it append. Between two of the writer's
            // transactions, a WAL copied whole costs the writer's checkpoint no copy and no sync, and its next
            // transaction restarts the WAL.
            if !isStopping.load(ordering: .acquiring) {
                isCompletionWanted.store(true, ordering: .releasing)
                completionWanted.withLock { $0 }?()
            }
        }
        connection.close()
        stopped.signal()
    }

    /// How many more passes the thread runs after one that left frames behind, before asking the writer.
    static let extraPasses = 2

    /// What one pass did.
    struct Pass {
        /// The frames copied so far in this WAL (SQLite's `nBackfill`).
        var copied: Int
        /// The WAL's restarts when the pass began (a restart starts `copied` again from 0).
        var restarts: Int
        /// Whether it left frames that the writer appended, or that a reader still needs.
        var leftFrames: Bool
        /// Whether it copied frames that the pass before it (`after`) had not.
        var madeProgress: Bool
    }

    /// One passive pass: copies what no reader still needs, never waits (the busy handler is not called in this
    /// mode). When it copied frames and left others, it also syncs the database file, which SQLite does only
    /// after a pass that copied everything, so that the writer's completion has only its own few pages to sync.
    private func checkpoint(after previous: Pass?) -> Pass {
        var log: Int32 = -1
        var copied: Int32 = -1
        let restarts = walRestarts.load(ordering: .relaxed)
        let code = sqlite3_wal_checkpoint_v2(connection.handle, "main", SQLITE_CHECKPOINT_PASSIVE, &log, &copied)
        let outcome = code & 0xff
        // `log` is the WAL as the pass saw it when it began; the writer may have appended since (the hook's
        // count), and then SQLite did not sync the database either.
        let walPages = max(Int(log), lastWALPages.load(ordering: .relaxed))
        let leftFrames = outcome == SQLITE_OK && copied >= 0 && walPages > Int(copied)
        let madeProgress =
            copied > 0 && (previous.map { $0.restarts != restarts || $0.copied < Int(copied) } ?? true)
        let synced = leftFrames && madeProgress && syncDatabaseFile()
        counters.withLock { counters in
            counters.checkpoints += 1
            switch outcome {
            case SQLITE_OK:
                counters.framesCheckpointed += Int(max(copied, 0))
                counters.lastLogFrames = Int(log)
                counters.lastWasComplete = !leftFrames
                if !leftFrames { counters.completeCheckpoints += 1 }
                if synced { counters.databaseSyncs += 1 }
            case SQLITE_BUSY:
                // Another checkpoint (the writer's) holds the checkpoint lock.
                counters.busy += 1
                counters.lastWasComplete = false
            default:
                counters.failures += 1
                counters.lastWasComplete = false
            }
        }
        return Pass(copied: Int(max(copied, 0)), restarts: restarts, leftFrames: leftFrames, madeProgress: madeProgress)
    }

    /// `fdatasync`s the database file through the checkpointer's connection (SQLite's own `xSync` of the file);
    /// whether it succeeded.
    private func syncDatabaseFile() -> Bool {
        var file: UnsafeMutablePointer<sqlite3_file>?
        guard sqlite3_file_control(connection.handle, "main", SQLITE_FCNTL_FILE_POINTER, &file) == SQLITE_OK,
            let file, let sync = file.pointee.pMethods?.pointee.xSync
        else { return false }
        return sync(file, SQLITE_SYNC_NORMAL) == SQLITE_OK
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
