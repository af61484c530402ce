import Dispatch
import Foundation
import Synchronization

/// The only writer of a SQLite store: one connection, one serial queue, group commit.
///
/// `submit` queues a save and blocks until it is answered. When the queue gets to work it takes
/// every save waiting at that moment and applies them in ONE SQLite transaction, each inside its
/// own `SAVEPOINT`: a save that fails (conflict, validation) is rolled back to its savepoint and
/// fails alone, the others commit together with one `COMMIT` (one WAL fsync). A save alone in its
/// group runs without a savepoint: if it fails, the transaction is rolled back. Each committed save
/// gets its own `txn`, strictly increasing in queue order. Saves that arrive during a commit form
/// the next group.
///
/// Durability: a group that holds at least one `.disk` save commits with `synchronous=FULL`
/// (the WAL is fsynced before `COMMIT` returns). A group of only `.memory` saves commits with
/// `synchronous=NORMAL`: no fsync, durable at the next checkpoint or the next FULL commit; a
/// crash can lose it, a process crash alone cannot (the WAL is written before the answer).
final class SQLiteWriter: @unchecked Sendable {
    // @unchecked Sendable: `connection`, `counters`, `dirtyCounters`, `lastTxn`, `oldestHistory`,
    // `isSynchronousFull` and `isClosed` are used only on `queue`; `pending`, `lastCommitted` and
    // `statistics` are a Mutex/Atomic.
    private let queue = DispatchQueue(label: "ContextBus.SQLiteStore.writer", qos: .userInitiated)
    private let pending = Locked(PendingSaves())
    private let connection: SQLiteConnection
    private let model: Model
    private let tables: [String: SQLiteEntityTable]
    private let codec: HistoryCodec
    private let historyRetention: Int
    private let observers: ChangeObservers

    private var counters: [String: Int64] = [:]
    private var dirtyCounters: Set<String> = []
    private var lastTxn: Int64 = 0
    private var oldestHistory: Int64?
    private var isSynchronousFull = true
    private var isClosed = false

    /// The last committed transaction, for readers of `lastTransaction`.
    let lastCommitted = Atomic<Int64>(0)
    let statistics = Locked(SQLiteStore.Statistics())
    /// How many to-many members save planning has read (tests check that faults stay faults).
    let membersRead = Atomic<Int>(0)

    private struct PendingSaves {
        var jobs: [SaveJob] = []
        var isDrainScheduled = false
    }

    init(
        connection: SQLiteConnection, model: Model, tables: [String: SQLiteEntityTable], historyRetention: Int,
        observers: ChangeObservers
    ) throws {
        self.connection = connection
        self.model = model
        self.tables = tables
        self.codec = HistoryCodec(model: model)
        self.historyRetention = historyRetention
        self.observers = observers
        let counterRows = try connection.statement("SELECT \"Z_ENTITY\", \"Z_MAX\" FROM \"Z_PRIMARYKEY\"")
        while try counterRows.step() { counters[counterRows.text(at: 0)] = counterRows.int64(at: 1) }
        counterRows.reset()
        lastTxn = Int64(try SQLiteSchemaSetup.metadata("lastTxn", on: connection) ?? "0") ?? 0
        oldestHistory = try connection.integer("SELECT MIN(\"Z_TXN\") FROM \"Z_HISTORY\"")
        lastCommitted.store(lastTxn, ordering: .releasing)
        try connection.execute("PRAGMA synchronous=FULL")
        // The savepoints' sub-journals (the original of every page a save changes) in memory,
        // not in a temporary file: otherwise every save writes its pages twice.
        try connection.execute("PRAGMA temp_store=MEMORY")
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

    private func commitGroup(_ jobs: [SaveJob]) {
        var outcomes: [Result<SaveResult, any Error>] = []
        var committed: [ChangeSet] = []
        var txn = lastTxn
        do {
            try setSynchronous(full: jobs.contains { $0.request.durability == .disk })
            try connection.statement("BEGIN IMMEDIATE").run()
            // A save alone in its group needs no savepoint: when it fails, the whole transaction
            // is rolled back instead (sparing the sub-journal's copy of every page it changes).
            let isAlone = jobs.count == 1
            for job in jobs {
                outcomes.append(try apply(job.request, txn: &txn, committed: &committed, inSavepoint: !isAlone))
            }
            if isAlone, case .failure = outcomes[0] {
                try connection.statement("ROLLBACK").run()
                throw GroupRolledBack()
            }
            var pruneTo: Int64?
            if !committed.isEmpty {
                try writeCounters()
                try connection.run(
                    "UPDATE \"Z_METADATA\" SET \"Z_VALUE\" = ? WHERE \"Z_KEY\" = 'lastTxn'", [.int(txn)])
                pruneTo = try pruneHistory(lastTxn: txn, firstCommitted: committed[0].txn)
            }
            try connection.statement("COMMIT").run()
            if let pruneTo {
                oldestHistory = pruneTo + 1
            } else if oldestHistory == nil, let first = committed.first {
                oldestHistory = first.txn
            }
            lastTxn = txn
        } catch is GroupRolledBack {
            committed = []
        } catch {
            try? connection.execute("ROLLBACK")
            outcomes = jobs.map { _ in .failure(error) }
            committed = []
        }
        lastCommitted.store(lastTxn, ordering: .releasing)
        statistics.withLock { stats in
            stats.groups += 1
            stats.saves += jobs.count
            stats.lastGroupSize = jobs.count
            stats.largestGroup = max(stats.largestGroup, jobs.count)
            stats.groupSizes[jobs.count, default: 0] += 1
        }
        observers.publish(committed)
        for (job, outcome) in zip(jobs, outcomes) { job.finish(outcome) }
    }

    /// The group's transaction was rolled back because its only save failed (not an error of the group).
    private struct GroupRolledBack: Error {}

    /// Applies one save, inside its own savepoint when `inSavepoint` (otherwise the caller rolls
    /// the transaction back when it fails). Returns its outcome; throws only when the savepoint
    /// itself cannot be managed (then the whole group fails).
    private func apply(
        _ request: SaveRequest, txn: inout Int64, committed: inout [ChangeSet], inSavepoint: Bool
    ) throws -> Result<SaveResult, any Error> {
        let time = Date()
        guard !request.isEmpty else {
            return .success(InMemoryStore.emptyResult(txn: txn, time: time, request: request))
        }
        if inSavepoint { try connection.statement("SAVEPOINT \"save\"").run() }
        do {
            var planner = ChangeSetPlanner(model: model, source: self)
            let plan = try planner.plan(request)
            guard !plan.isEmpty else {
                if inSavepoint { try connection.statement("RELEASE \"save\"").run() }
                var result = InMemoryStore.emptyResult(txn: txn, time: time, request: request)
                result.ids = plan.ids
                return .success(result)
            }
            let changes = plan.changeSet(txn: txn + 1, time: time, author: request.author)
            try write(changes, toManyDeltas: plan.toManyDeltas)
            if inSavepoint { try connection.statement("RELEASE \"save\"").run() }
            txn += 1
            committed.append(changes)
            return .success(SaveResult(txn: changes.txn, ids: plan.ids, versions: plan.versions, changes: changes))
        } catch {
            if inSavepoint {
                try connection.statement("ROLLBACK TO \"save\"").run()
                try connection.statement("RELEASE \"save\"").run()
            }
            return .failure(error)
        }
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

    private func writeCounters() throws(SQLiteError) {
        for entity in dirtyCounters.sorted() {
            try connection.run(
                "INSERT OR REPLACE INTO \"Z_PRIMARYKEY\" (\"Z_ENTITY\", \"Z_MAX\") VALUES (?, ?)",
                [.string(entity), .int(counters[entity] ?? 0)])
        }
        dirtyCounters.removeAll()
    }

    /// Deletes history rows beyond the retention (in chunks, so not on every commit); returns
    /// the last deleted txn.
    private func pruneHistory(lastTxn: Int64, firstCommitted: Int64) throws(SQLiteError) -> Int64? {
        let oldest = oldestHistory ?? firstCommitted
        let slack = Int64(max(historyRetention / 16, 1))
        guard lastTxn - oldest + 1 > Int64(historyRetention) + slack else { return nil }
        let cutoff = lastTxn - Int64(historyRetention)
        try connection.run("DELETE FROM \"Z_HISTORY\" WHERE \"Z_TXN\" <= ?", [.int(cutoff)])
        return cutoff
    }

    private func setSynchronous(full: Bool) throws(SQLiteError) {
        guard full != isSynchronousFull else { return }
        try connection.execute(full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL")
        isSynchronousFull = full
    }

    // MARK: - Testing hooks

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
    func reserve(entity: String, count: Int) throws -> Int64 {
        try queue.sync {
            guard !isClosed else { throw StoreError.unavailable("the store is closed") }
            let first = allocateNumbers(entity: entity, count: count)
            try setSynchronous(full: true)
            try connection.execute("BEGIN IMMEDIATE")
            do {
                try writeCounters()
                try connection.execute("COMMIT")
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
        let first = counters[entity, default: 0] + 1
        counters[entity, default: 0] += Int64(count)
        dirtyCounters.insert(entity)
        return first
    }

    func highestAllocatedNumber(entity: String) -> Int64 {
        counters[entity, default: 0]
    }
}

/// One save waiting for the writer: the request, then its answer (to a waiting thread, or to a
/// completion handler).
final class SaveJob: Sendable {
    let request: SaveRequest
    private let done = DispatchSemaphore(value: 0)
    private let outcome = Locked<Result<SaveResult, any Error>?>(nil)
    private let completion: (@Sendable (Result<SaveResult, any Error>) -> Void)?

    init(request: SaveRequest, completion: (@Sendable (Result<SaveResult, any Error>) -> Void)? = nil) {
        self.request = request
        self.completion = completion
    }

    func finish(_ result: Result<SaveResult, any Error>) {
        if let completion {
            completion(result)
            return
        }
        outcome.withLock { $0 = result }
        done.signal()
    }

    func wait() -> Result<SaveResult, any Error> {
        done.wait()
        return outcome.withLock { $0! }
    }
}
