import CContextBusSQLite
import ContextBusObjectGraph
import ContextBusSupport
import Dispatch
import Foundation
import Synchronization

/// The only writer of a SQLite store: one connection, one serial queue, group commit.
///
/// `submit` queues a save and blocks until it is answered. When the queue gets to work it takes
/// every save waiting at that moment and applies them in ONE SQLite transaction with one `COMMIT`
/// (one WAL fsync). A save that fails while being planned (conflict, validation, not found) fails
/// alone: planning only reads. The saves' rows are written without savepoints (a savepoint copies
/// every page a save changes into its sub-journal); if a save's rows cannot be written (an SQLite
/// error halfway), the transaction is rolled back and the group runs again with each save inside
/// its own `SAVEPOINT`, so that the failing one is rolled back to it and fails alone. Each
/// committed save gets its own `txn`, strictly increasing in queue order. Saves that arrive
/// during a commit form the next group.
///
/// Durability: a group that holds at least one `.disk` save commits with `synchronous=FULL`
/// (the WAL is fsynced before `COMMIT` returns). A group of only `.memory` saves commits with
/// `synchronous=NORMAL`: no fsync, durable at the next checkpoint or the next FULL commit; a
/// power cut can lose it, a process crash alone cannot (the WAL is written before the answer).
/// The txns and IDs such a group hands out stay within what a synced commit reserved
/// (`NumberReservations`), so that a power cut that loses it never lets them be handed out again.
/// `durable` is the last transaction a sync made durable; a sync can be asked for (`makeDurableSoon`).
final class SQLiteWriter: @unchecked Sendable {
    // @unchecked Sendable: `connection`, `reservations`, `lastTxn`, `oldestHistory`,
    // `isSynchronousFull`, `isSyncWanted` and `isClosed` are used only on `queue`; `pending`,
    // `lastCommitted`, `durable` and `statistics` are behind a `Locked` or an `Atomic`.
    let queue = DispatchQueue(label: "ContextBus.SQLiteStore.writer", qos: .userInitiated)
    private let pending = Locked(PendingSaves())
    let connection: SQLiteConnection
    private let model: Model
    private let tables: [String: SQLiteEntityTable]
    private let codec: HistoryCodec
    private let layout: ChangeSetPlanner.ModelLayout
    /// How the model maps onto tables, for the predicates of batches (`objects(of:matching:)`).
    private let schema: SQLSchema
    private let historyRetention: Int
    private let observers: ChangeObservers
    /// Completes the WAL checkpoints its thread leaves unfinished, between this writer's groups.
    private let checkpointer: SQLiteCheckpointer
    /// The store's state as a fleet member (`SQLiteWriter+Replica.swift`).
    let replica: SQLiteReplica

    /// The IDs handed out, and the txns and IDs a synced commit reserved.
    private var reservations: NumberReservations
    private var lastTxn: Int64 = 0
    /// The `lastTxn` last written to `Z_METADATA` (at pruning and at close; the history's newest
    /// row tells the number otherwise: `SQLiteSchemaSetup.lastTransactionSQL`).
    private var recordedLastTxn: Int64 = 0
    private var oldestHistory: Int64?
    private var isSynchronousFull = true
    /// The next group syncs because a sync was asked for (`syncRequested`).
    private var isSyncWanted = false
    private var isClosed = false

    /// The last committed transaction, for readers of `lastTransaction`.
    let lastCommitted = Atomic<Int64>(0)
    /// The last transaction a sync made durable (`DurablePosition`).
    let durable = DurablePosition()
    let statistics = Locked(SQLiteStore.Statistics())
    /// How many to-many members save planning has read (tests check that faults stay faults).
    let membersRead = Atomic<Int>(0)
    /// How long committed groups' transactions took, `BEGIN` to `COMMIT`'s return (storesvc's metrics).
    let commitLatency = LatencyHistogram()
    /// How long each sync of the WAL took (the `fdatasync` of a durable group; `WALWriteGathering`).
    let walSyncLatency = LatencyHistogram()

    private struct PendingSaves {
        var jobs: [SaveJob] = []
        var isDrainScheduled = false
    }

    init(
        connection: SQLiteConnection, model: Model, tables: [String: SQLiteEntityTable], historyRetention: Int,
        observers: ChangeObservers, checkpointer: SQLiteCheckpointer
    ) throws {
        self.connection = connection
        self.model = model
        self.tables = tables
        self.codec = HistoryCodec(model: model)
        self.layout = ChangeSetPlanner.ModelLayout(model: model)
        self.schema = SQLSchema(model: model)
        self.historyRetention = historyRetention
        self.observers = observers
        self.checkpointer = checkpointer
        replica = try SQLiteReplica(model: model, connection: connection)
        var reservedIDs: [String: Int64] = [:]
        let counterRows = try connection.statement("SELECT \"Z_ENTITY\", \"Z_MAX\" FROM \"Z_PRIMARYKEY\"")
        while try counterRows.step() { reservedIDs[counterRows.text(at: 0)] = counterRows.int64(at: 1) }
        counterRows.reset()
        lastTxn = try connection.integer(SQLiteSchemaSetup.lastTransactionSQL) ?? 0
        let reservedTxn = try SQLiteSchemaSetup.metadata(Self.reservedTxnKey, on: connection).flatMap { Int64($0) }
        reservations = NumberReservations(reservedIDs: reservedIDs, reservedTxn: max(reservedTxn ?? 0, lastTxn))
        recordedLastTxn = lastTxn
        try connection.execute("PRAGMA synchronous=FULL")
        try connection.gatherWALWrites(true)
        connection.timeWALSyncs(into: walSyncLatency)
        // The savepoints' sub-journals (the original of every page a save changes) in memory,
        // not in a temporary file: otherwise every save writes its pages twice.
        try connection.execute("PRAGMA temp_store=MEMORY")
        if try resumeNumbering() { durable.synced(upTo: lastTxn) }
        oldestHistory = try connection.integer("SELECT MIN(\"Z_TXN\") FROM \"Z_HISTORY\"")
        lastCommitted.store(lastTxn, ordering: .releasing)
        // `Statistics.walFrames` counts the groups' frames, not the schema set-up's on this connection.
        _ = connection.takePagesWrittenToTheWAL()
        _ = connection.takeWALWrites()
    }

    // MARK: - Saving

    /// Queues `request` for the next group commit and waits for its answer.
    func submit(_ request: SaveRequest) throws -> SaveResult {
        let job = SaveJob(request: request)
        enqueue(job)
        return try job.wait().get()
    }

    /// Queues `request` for the next group commit and returns at once; `completion` is called
    /// with the answer on the writer's queue, so it must hand work off rather than block.
    ///
    /// Saves queued by one thread are applied in the order they were queued.
    func submit(_ request: SaveRequest, completion: @escaping @Sendable (Result<SaveResult, any Error>) -> Void) {
        enqueue(SaveJob(request: request, completion: completion))
    }

    private func enqueue(_ job: SaveJob) {
        let mustSchedule = pending.withLock { pending in
            pending.jobs.append(job)
            defer { pending.isDrainScheduled = true }
            return !pending.isDrainScheduled
        }
        if mustSchedule { queue.async { self.drain() } }
    }

    /// Takes every waiting save and commits them as one group.
    private func drain() {
        let jobs = pending.withLock { pending in
            defer {
                pending.jobs = []
                pending.isDrainScheduled = false
            }
            return pending.jobs
        }
        guard !jobs.isEmpty else { return }
        guard !isClosed else {
            for job in jobs { job.finish(.failure(StoreError.unavailable("the store is closed"))) }
            return
        }
        commitGroup(jobs)
    }

    private func commitGroup(_ first: [SaveJob]) {
        var jobs = first
        var outcomes: [Result<SaveResult, any Error>]
        var committed: [ChangeSet]
        var retried = false
        var inSavepoints = false
        var mustSync = false
        do {
            attempts: while true {
                let numbersBefore = reservations
                switch try attempt(&jobs, inSavepoints: inSavepoints, mustSync: mustSync) {
                case .finished(let results, let changes):
                    (outcomes, committed) = (results, changes)
                    break attempts
                case .writeFailed(let error) where jobs.count == 1 || inSavepoints:
                    (outcomes, committed) = (jobs.map { _ in .failure(error) }, [])
                    break attempts
                case .writeFailed:
                    // Once more with each save in a savepoint of its own: the one whose rows cannot be
                    // written is rolled back to its savepoint and fails alone. Nobody has been answered
                    // yet, so the first attempt leaves no trace but the numbers it allocated (a gap).
                    retried = true
                    inSavepoints = true
                case .mustSync:
                    // Once more with a sync, which raises the reservations it ran past. Nobody has been answered and
                    // nothing else allocates meanwhile (only this queue does), so the numbers the rolled-back attempt
                    // allocated are handed out again, by the synced one: no gap.
                    reservations = numbersBefore
                    mustSync = true
                }
            }
        } catch {
            try? connection.execute("ROLLBACK")
            outcomes = jobs.map { _ in .failure(error) }
            committed = []
        }
        lastCommitted.store(lastTxn, ordering: .releasing)
        let walFrames = connection.takePagesWrittenToTheWAL()
        let walWrites = connection.takeWALWrites()
        statistics.withLock { stats in
            stats.walFrames += walFrames
            stats.walWrites += walWrites
            stats.groups += 1
            stats.saves += jobs.count
            stats.lastGroupSize = jobs.count
            stats.largestGroup = max(stats.largestGroup, jobs.count)
            stats.groupSizes[jobs.count, default: 0] += 1
            if retried { stats.groupsRetriedInSavepoints += 1 }
        }
        observers.publish(committed)
        for (job, outcome) in zip(jobs, outcomes) { job.finish(outcome) }
        checkpointIfDue()
    }

    // MARK: - Checkpoints

    /// Copies the rest of the WAL that the checkpointer's pass left, if that is due: after a group's answers and
    /// events are handed off, never inside a transaction (see `SQLiteCheckpointer.completeOnTheWriter`).
    private func checkpointIfDue() {
        guard !isClosed else { return }
        checkpointer.completeOnTheWriter(connection.handle, savesWaiting: pendingCount > 0)
    }

    /// Asks the writer to copy the rest of the WAL once it has answered the group it is running (at once when
    /// idle); the checkpointer's thread calls this after each of its passes.
    func checkpointWhenIdle() {
        queue.async { self.checkpointIfDue() }
    }

    /// How one attempt at committing a group ended.
    private enum GroupAttempt {
        /// Every save has its outcome; the ones that succeeded are committed (in `txn` order).
        case finished([Result<SaveResult, any Error>], committed: [ChangeSet])
        /// A save outside a savepoint failed while its rows were written: the transaction was
        /// rolled back and nothing of the group is committed.
        case writeFailed(any Error)
        /// The group, committing without a sync, handed out numbers past what is reserved: the
        /// transaction was rolled back, and the group must run again with a sync.
        case mustSync
    }

    /// Runs the group's saves in one transaction and commits the ones that succeed.
    ///
    /// Saves queued while the group is being applied join it (`jobs` grows; see
    /// `takeLateJoiners`): they would otherwise wait for this commit and then commit alone.
    ///
    /// A save that fails while being planned fails alone in either mode: planning writes nothing.
    /// Only writing rows can fail halfway; `inSavepoints` puts each save's writes in a savepoint
    /// that such a failure rolls back to, otherwise the whole transaction is rolled back (the
    /// caller retries in savepoints). The group syncs when a save asks for `.disk`, when `mustSync`, or when the
    /// numbers reserved run low (`NumberReservations`). Throws when the transaction itself fails.
    private func attempt(_ jobs: inout [SaveJob], inSavepoints: Bool, mustSync: Bool) throws -> GroupAttempt {
        var outcomes: [Result<SaveResult, any Error>] = []
        outcomes.reserveCapacity(jobs.count)
        var committed: [ChangeSet] = []
        var txn = lastTxn
        replica.hasUncommittedRows = false
        let syncsAnyway =
            mustSync || jobs.contains { $0.request.durability == .disk }
            || reservations.isRunningLow(lastTxn: lastTxn, groupLimit: Self.largestGroup)
        try setSynchronous(full: syncsAnyway || isSyncWanted)
        let began = ContinuousClock.now
        try connection.statement("BEGIN IMMEDIATE").run()
        var next = 0
        while next < jobs.count {
            let request = jobs[next].request
            next += 1
            do {
                outcomes.append(try apply(request, txn: &txn, committed: &committed, inSavepoint: inSavepoints))
            } catch let failure as UnsavedWriteFailure {
                try rollBack()
                return .writeFailed(failure.error)
            }
            // A retry in savepoints runs exactly the group that failed.
            if next == jobs.count, !inSavepoints {
                if let hook = groupAppliedHook.withLock({ $0 }) { hook() }
                jobs += takeLateJoiners(upTo: Self.largestGroup - jobs.count)
            }
        }
        guard !committed.isEmpty || replica.hasUncommittedRows else {
            // Nothing to make durable: every save failed or changed nothing.
            try rollBack()
            return .finished(outcomes, committed: [])
        }
        // The numbers handed out: raised ahead in a commit that syncs; within the reservations in one that does not.
        // No `Z_METADATA.lastTxn` update: the history row just written tells the number.
        var raise: NumberReservations.Raise?
        if isSynchronousFull {
            raise = reservations.raises(
                txn: txn, groupLimit: Self.largestGroup, raisingTxns: jobs.contains { $0.request.durability != .disk })
            try write(raise!)
        } else if reservations.isExceeded(txn: txn) {
            try rollBack()
            return .mustSync
        }
        let pruneTo = try pruneHistory(lastTxn: txn, firstCommitted: committed.first?.txn ?? txn)
        try connection.statement("COMMIT").run()
        if let raise { reservations.apply(raise) }
        if isSynchronousFull {
            durable.synced(upTo: txn)
            if isSyncWanted, !syncsAnyway { durable.countRequestedSync() }
            isSyncWanted = false
        }
        commitLatency.record(ContinuousClock.now - began)
        if let pruneTo {
            oldestHistory = pruneTo + 1
            recordedLastTxn = txn
        } else if oldestHistory == nil {
            oldestHistory = committed.first?.txn
        }
        lastTxn = txn
        return .finished(outcomes, committed: committed)
    }

    /// The most saves one transaction takes in, counting late joiners.
    static let largestGroup = 256

    /// Takes up to `limit` saves queued since the group began, in queue order, for the group's
    /// transaction: the longest prefix of the queue that fits the transaction's durability (a
    /// `.disk` save cannot join a group committing without fsync; the saves behind it wait with
    /// it, so that saves queued by one thread stay in order). The drain already scheduled for
    /// them finds the queue empty, or takes the rest.
    private func takeLateJoiners(upTo limit: Int) -> [SaveJob] {
        guard limit > 0 else { return [] }
        return pending.withLock { pending in
            var count = 0
            while count < min(limit, pending.jobs.count),
                isSynchronousFull || pending.jobs[count].request.durability != .disk
            {
                count += 1
            }
            guard count > 0 else { return [] }
            defer { pending.jobs.removeFirst(count) }
            return Array(pending.jobs[..<count])
        }
    }

    /// Rolls the transaction back, unless SQLite has already done so (it does after some errors,
    /// such as a full disk).
    private func rollBack() throws(SQLiteError) {
        guard sqlite3_get_autocommit(connection.handle) == 0 else { return }
        try connection.statement("ROLLBACK").run()
    }

    /// A save's rows failed to be written outside a savepoint (the group must be rolled back).
    private struct UnsavedWriteFailure: Error {
        let error: any Error
    }

    /// Applies one save: plans it, then writes its rows, inside its own savepoint when
    /// `inSavepoint`. Returns its outcome; throws `UnsavedWriteFailure` when writing fails outside
    /// a savepoint, or the error of managing the savepoint (then the whole group fails).
    private func apply(
        _ asked: SaveRequest, txn: inout Int64, committed: inout [ChangeSet], inSavepoint: Bool
    ) throws -> Result<SaveResult, any Error> {
        let time = replica.commitTime(applying: asked.origin)
        var request = asked
        // A save from another gateway: resolved against the fleet's clocks and IDs (`nil`: applied before).
        let resolved: ResolvedReplicaSave?
        do {
            resolved = try resolvedReplicaSave(asked)
        } catch {
            return .failure(error)
        }
        if asked.origin != nil {
            guard let resolved else { return .success(InMemoryStore.emptyResult(txn: txn, time: time, request: asked)) }
            request = resolved.request
        }
        guard !request.isEmpty || asked.origin != nil else {
            return .success(InMemoryStore.emptyResult(txn: txn, time: time, request: request))
        }
        let plan: SavePlan
        do {
            var planner = ChangeSetPlanner(layout: layout, source: self)
            plan = try planner.plan(request)
        } catch {
            return .failure(error)  // planning reads, it never writes: there is nothing to roll back
        }
        guard !plan.isEmpty else {
            if asked.origin != nil {
                // Nothing changes here, but the origin's transaction is applied all the same.
                if inSavepoint { try connection.statement("SAVEPOINT \"save\"").run() }
                do {
                    try replica.record(nil, ids: plan.ids, resolved: resolved, origin: asked.origin, on: connection)
                } catch {
                    guard inSavepoint else { throw UnsavedWriteFailure(error: error) }
                    try connection.statement("ROLLBACK TO \"save\"").run()
                    try connection.statement("RELEASE \"save\"").run()
                    return .failure(error)
                }
                if inSavepoint { try connection.statement("RELEASE \"save\"").run() }
            }
            var result = InMemoryStore.emptyResult(txn: txn, time: time, request: request)
            result.ids = plan.ids
            result.matched = plan.matched
            return .success(result)
        }
        let changes = plan.changeSet(txn: txn + 1, time: time, author: request.author)
        if inSavepoint { try connection.statement("SAVEPOINT \"save\"").run() }
        do {
            try write(changes, toManyDeltas: plan.toManyDeltas)
            try replica.record(changes, ids: plan.ids, resolved: resolved, origin: asked.origin, on: connection)
        } catch {
            guard inSavepoint else { throw UnsavedWriteFailure(error: error) }
            try connection.statement("ROLLBACK TO \"save\"").run()
            try connection.statement("RELEASE \"save\"").run()
            return .failure(error)
        }
        if inSavepoint { try connection.statement("RELEASE \"save\"").run() }
        txn += 1
        committed.append(changes)
        var result = SaveResult(txn: changes.txn, ids: plan.ids, versions: plan.versions, changes: changes)
        result.matched = plan.matched
        return .success(result)
    }

    private func write(_ changes: ChangeSet, toManyDeltas: [ObjectID: [String: ToManyDelta]]) throws {
        var start = changes.inserted.startIndex
        while start < changes.inserted.endIndex {
            // Runs of inserts of one entity share one prepared statement.
            let entity = changes.inserted[start].id.entity
            let end = changes.inserted[start...].firstIndex { $0.id.entity != entity } ?? changes.inserted.endIndex
            try tables[entity]!.insert(changes.inserted[start..<end], on: connection)
            start = end
        }
        for update in changes.updated {
            try tables[update.snapshot.id.entity]!.update(
                update, toManyDeltas: toManyDeltas[update.snapshot.id], on: connection)
        }
        for snapshot in changes.deleted { try tables[snapshot.id.entity]!.delete(snapshot, on: connection) }
        let statement = try connection.statement(
            "INSERT INTO \"Z_HISTORY\" (\"Z_TXN\", \"Z_TIME\", \"Z_AUTHOR\", \"Z_CHANGES\") VALUES (?, ?, ?, ?)")
        try statement.bind(changes.txn, at: 1)
        try statement.bind(changes.time.timeIntervalSinceReferenceDate, at: 2)
        try statement.bind(changes.author.map(PropertyValue.string) ?? .null, at: 3)
        try statement.bind(utf8: codec.encode(changes), at: 4)
        try statement.run()
    }

    // MARK: - Numbers

    /// The `Z_METADATA` key of `NumberReservations.reservedTxn`.
    static let reservedTxnKey = "reservedTxn"

    /// Writes reservations (in the transaction under way): `Z_METADATA.reservedTxn` and entities' `Z_MAX`.
    private func write(_ raise: NumberReservations.Raise) throws(SQLiteError) {
        if let txn = raise.txn { try SQLiteSchemaSetup.setMetadata(Self.reservedTxnKey, .int(txn), on: connection) }
        // An UPDATE changes only the table's page; `INSERT OR REPLACE` would delete and insert
        // the row, changing its key's index page too.
        for (entity, maximum) in raise.ids.sorted(by: { $0.key < $1.key }) {
            try connection.run(
                "UPDATE \"Z_PRIMARYKEY\" SET \"Z_MAX\" = ? WHERE \"Z_ENTITY\" = ?", [.int(maximum), .string(entity)])
            guard sqlite3_changes(connection.handle) == 0 else { continue }
            try connection.run(
                "INSERT INTO \"Z_PRIMARYKEY\" (\"Z_ENTITY\", \"Z_MAX\") VALUES (?, ?)",
                [.string(entity), .int(maximum)])
        }
    }

    /// At open: when the file reserves txns past its last one, the store did not close (a crash, `kill -9`, a power
    /// cut) and may have handed them out in saves it lost; each gets an empty history row, so that numbering goes on
    /// after them and every txn has a row. Then raises the reservations, in one synced transaction. Returns whether
    /// it committed one (the WAL is then synced: everything in it is durable).
    private func resumeNumbering() throws -> Bool {
        let skipped = reservations.reservedTxn > lastTxn ? (lastTxn + 1)...reservations.reservedTxn : nil
        // Txns are raised by the first group of memory saves, not here: a store saving only to disk reserves none.
        let raise = reservations.raises(
            txn: skipped?.upperBound ?? lastTxn, groupLimit: Self.largestGroup, raisingTxns: false)
        guard skipped != nil || !raise.isEmpty else { return false }
        try connection.execute("BEGIN IMMEDIATE")
        do {
            if let skipped {
                let time = Date()
                let statement = try connection.statement(
                    "INSERT INTO \"Z_HISTORY\" (\"Z_TXN\", \"Z_TIME\", \"Z_AUTHOR\", \"Z_CHANGES\") VALUES (?, ?, NULL, ?)"
                )
                for txn in skipped {
                    let empty = ChangeSet(txn: txn, time: time, author: nil, inserted: [], updated: [], deleted: [])
                    statement.reset()
                    try statement.bind(txn, at: 1)
                    try statement.bind(time.timeIntervalSinceReferenceDate, at: 2)
                    try statement.bind(utf8: codec.encode(empty), at: 3)
                    try statement.run()
                }
            }
            try write(raise)
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
        if let skipped { lastTxn = skipped.upperBound }
        reservations.apply(raise)
        return true
    }

    // MARK: - The durable position

    /// The `Z_METADATA` key a sync made only because one was asked for writes (the transaction it made durable):
    /// a commit that changes no page writes nothing and syncs nothing.
    static let syncedTxnKey = "syncedTxn"

    /// Asks for every transaction committed so far to be made durable soon (`DurablePosition`): within
    /// `DurablePosition.interval` of the last asked-for sync and of the group under way. Returns at once; nothing is
    /// done when everything is durable already.
    func makeDurableSoon() {
        guard durable.transaction < lastCommitted.load(ordering: .acquiring), durable.request() else { return }
        queue.async { self.syncRequested() }
    }

    /// The asked-for sync, on the writer's queue: the next group syncs when saves wait (it would follow at once),
    /// else a small transaction of its own does.
    private func syncRequested() {
        let wait = durable.delay(at: .now)
        guard wait <= .zero else {
            queue.asyncAfter(deadline: .now() + .nanoseconds(Int(wait / .nanoseconds(1)))) { self.syncRequested() }
            return
        }
        durable.beginRequestedSync(at: .now)
        guard !isClosed, durable.transaction < lastTxn else { return }
        if pendingCount > 0 {
            isSyncWanted = true
            return
        }
        do {
            try setSynchronous(full: true)
            try connection.execute("BEGIN IMMEDIATE")
            try SQLiteSchemaSetup.setMetadata(Self.syncedTxnKey, .int(lastTxn), on: connection)
            try connection.execute("COMMIT")
            durable.synced(upTo: lastTxn)
            durable.countRequestedSync()
        } catch {
            // The next request tries again (a full disk, say, fails the saves too, which say why).
            try? rollBack()
        }
    }

    /// Deletes history rows beyond the retention (in chunks, so not on every commit); returns
    /// the last deleted txn.
    private func pruneHistory(lastTxn: Int64, firstCommitted: Int64) throws(SQLiteError) -> Int64? {
        let oldest = oldestHistory ?? firstCommitted
        let slack = Int64(max(historyRetention / 16, 1))
        guard lastTxn - oldest + 1 > Int64(historyRetention) + slack else { return nil }
        // A fleet member keeps what its bridge has not published (docs/fleet.md, "Outbound").
        let cutoff = min(lastTxn - Int64(historyRetention), replica.gateway == nil ? lastTxn : replica.published)
        guard cutoff >= oldest else { return nil }
        try connection.run("DELETE FROM \"Z_HISTORY\" WHERE \"Z_TXN\" <= ?", [.int(cutoff)])
        // Retention is at least 1, so the newest row survives; the floor makes the number
        // independent of that (pruning is rare: once every retention/16 commits).
        try connection.run(SQLiteSchemaSetup.setLastTransactionSQL, [.int(lastTxn)])
        return cutoff
    }

    private func setSynchronous(full: Bool) throws(SQLiteError) {
        guard full != isSynchronousFull else { return }
        try connection.execute(full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL")
        // A FULL commit syncs the WAL before the WAL index names its frames; a NORMAL one does not, so its
        // frames are written as SQLite makes them (`WALWriteGathering`).
        try connection.gatherWALWrites(full)
        isSynchronousFull = full
    }

    // MARK: - Testing hooks

    /// Called on the writer's queue whenever the saves taken into a group so far are applied,
    /// just before late joiners are taken (tests queue a save at that moment).
    let groupAppliedHook = Locked<(@Sendable () -> Void)?>(nil)

    /// Makes the next gathered write to the WAL fail with `SQLITE_IOERR_WRITE` (tests).
    func failNextWALWrite() {
        queue.sync { connection.failNextWALWrite() }
    }

    /// Whether `close()` has run (on the writer's queue only).
    var isClosedForReplica: Bool { isClosed }

    /// The number of saves waiting for the next group.
    var pendingCount: Int { pending.withLock { $0.jobs.count } }

    /// Holds the writer queue until the returned function is called (tests use it to make saves
    /// pile up into one group deterministically).
    func suspend() -> @Sendable () -> Void {
        let gate = DispatchSemaphore(value: 0)
        let entered = DispatchSemaphore(value: 0)
        queue.async {
            entered.signal()
            gate.wait()
        }
        entered.wait()
        return { gate.signal() }
    }

    // MARK: - IDs and closing

    /// Reserves `count` IDs of `entity` in a transaction of their own.
    /// The IDs are handed out at once when a synced commit reserved them already; otherwise a synced transaction
    /// raises the reservation first.
    func reserve(entity: String, count: Int) throws -> Int64 {
        try queue.sync {
            guard !isClosed else { throw StoreError.unavailable("the store is closed") }
            let first = allocateNumbers(entity: entity, count: count)
            guard reservations.isExceeded(txn: lastTxn) else { return first }
            try setSynchronous(full: true)
            try connection.execute("BEGIN IMMEDIATE")
            do {
                let raise = reservations.raises(txn: lastTxn, groupLimit: Self.largestGroup, raisingTxns: false)
                try write(raise)
                try connection.execute("COMMIT")
                reservations.apply(raise)
            } catch {
                try? connection.execute("ROLLBACK")
                throw error
            }
            return first
        }
    }

    /// Answers waiting saves, then closes the connection; later saves fail with `.unavailable`.
    func close() {
        queue.sync {
            guard !isClosed else { return }
            isClosed = true
            // The numbers handed out, exactly: a store that closed skips none when it opens again. And for older
            // versions of the store, which read the number from `Z_METADATA` only, the last txn.
            let exact = reservations.exact(lastTxn: lastTxn)
            do {
                try setSynchronous(full: true)
                try connection.execute("BEGIN IMMEDIATE")
                try write(exact)
                if lastTxn != recordedLastTxn {
                    try connection.run(SQLiteSchemaSetup.setLastTransactionSQL, [.int(lastTxn)])
                }
                try connection.execute("COMMIT")
                reservations.settle(exact)
            } catch {
                try? connection.execute("ROLLBACK")
            }
            try? connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            connection.close()
        }
        // Saves queued after the close are answered by their own drain.
        queue.sync {}
    }
}

extension SQLiteWriter: ChangeSetSource {
    func snapshot(of id: ObjectID) throws -> ObjectSnapshot? {
        guard let number = id.number, let table = tables[id.entity] else { return nil }
        return try table.rowSnapshot(number: number, on: connection)
    }

    func members(of id: ObjectID, relationship: RelationshipDescription) throws -> [ObjectID] {
        guard let number = id.number, let table = tables[id.entity] else { return [] }
        let members = try table.members(of: number, relationship: relationship.name, on: connection)
        membersRead.add(members.count, ordering: .relaxed)
        return members
    }

    func allocateNumbers(entity: String, count: Int) -> Int64 {
        reservations.allocate(entity: entity, count: count)
    }

    func highestAllocatedNumber(entity: String) -> Int64 {
        reservations.highestAllocated(entity: entity)
    }

    func objects(of entity: String, matching predicate: ObjectPredicate?) throws -> [ObjectSnapshot] {
        guard let table = tables[entity] else { return [] }
        let q = SQLSchema.quote
        var sql = "SELECT \(table.qualifiedColumnList(alias: "\"t\"")) FROM \(q(schema.table(for: entity))) AS \"t\""
        var bindings: [PropertyValue] = []
        if let predicate {
            let compiled = try StorePredicates.sql(predicate, entity: entity, schema: schema, alias: "t")
            sql += " WHERE \(compiled.sql)"
            bindings = compiled.bindings
        }
        let statement = try connection.uncachedStatement(sql + " ORDER BY \"t\".\"Z_PK\"")
        for (i, value) in bindings.enumerated() { try statement.bind(value, at: Int32(i + 1)) }
        var snapshots: [ObjectSnapshot] = []
        while try statement.step() { snapshots.append(table.row(from: statement, column: 0)) }
        return snapshots
    }

    func object(of entity: String, withKey key: [String: PropertyValue]) throws -> ObjectID? {
        try tables[entity]?.object(withKey: key, on: connection)
    }
}
