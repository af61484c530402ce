import ContextBusObjectGraph
import ContextBusSupport
public import Foundation
import Synchronization

/// A `PersistentStore` in one SQLite file: WAL mode, one writer with group commit, a pool of
/// read connections, a persisted history of committed transactions.
///
/// The tables follow `SQLSchema`; opening a database made with another model fails with
/// `StoreError.modelMismatch`, unless the only difference is added optional attributes, which are
/// added in place. See `docs/persistence.md`.
public final class SQLiteStore: PersistentStore {
    /// Tuning of a store.
    public struct Configuration: Sendable {
        /// How many of the latest transactions `history(since:limit:)` can return.
        public var historyRetention: Int
        /// How many idle read connections are kept open.
        public var readConnections: Int
        /// How long a connection waits for a lock held by another process before failing.
        public var busyTimeoutMilliseconds: Int32
        /// The page size of a database file this store creates (a power of two from 512 to 65,536); `nil` for
        /// SQLite's default, 4,096. A file that exists keeps the page size it was made with (`pageSize`).
        ///
        /// Smaller pages make a commit's WAL frames fewer bytes: for storesvc's durable one-object saves, 2,048
        /// gave more saves/s in 16 of 18 measured pairs (docs/bus.md, "Session 12").
        public var pageSize: Int?

        public init(
            historyRetention: Int = 100_000, readConnections: Int = 4, busyTimeoutMilliseconds: Int32 = 5_000,
            pageSize: Int? = nil
        ) {
            precondition(pageSize.map(Self.isValidPageSize) ?? true, "pageSize must be a power of two, 512 to 65536")
            self.historyRetention = historyRetention
            self.readConnections = readConnections
            self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
            self.pageSize = pageSize
        }

        /// Whether SQLite accepts `size` as a page size: a power of two from 512 to 65,536.
        public static func isValidPageSize(_ size: Int) -> Bool {
            (512...65_536).contains(size) && size & (size - 1) == 0
        }

        /// WAL pages from which the checkpointer runs a checkpoint; 0 never checkpoints (tests, measurements;
        /// storesvc's hidden `--test-checkpoint-pages`).
        package var checkpointThresholdPages = SQLiteCheckpointer.defaultThresholdPages
    }

    /// Counters of the writer's group commits.
    public struct Statistics: Sendable, Hashable {
        /// Transactions the writer ran (each one group of saves).
        public var groups = 0
        /// Saves the writer answered (committed or failed).
        public var saves = 0
        /// The number of saves in the last group.
        public var lastGroupSize = 0
        /// The largest group so far.
        public var largestGroup = 0
        /// Group size → how many groups had that size.
        public var groupSizes: [Int: Int] = [:]
        /// Groups run a second time with a savepoint per save, because a save's rows could not
        /// be written (the first attempt runs without savepoints).
        public var groupsRetriedInSavepoints = 0
        /// Pages the writer has written to the WAL, one frame each (SQLite's `SQLITE_DBSTATUS_CACHE_WRITE`),
        /// counted after each group. Every frame is two `pwrite`s and part of its commit's `fdatasync`, so
        /// frames per group is the storage cost of a group commit (`docs/persistence.md`, "WAL frames").
        public var walFrames = 0
        /// Writes the writer has made to the WAL file: one per group with `.disk` saves, however many frames
        /// it has (`WALWriteGathering`); two per frame in a group of `.memory` saves, as SQLite makes them.
        public var walWrites = 0
    }

    public let model: Model
    /// The database file.
    public let url: URL
    let schema: SQLSchema
    let tables: [String: SQLiteEntityTable]
    let readers: SQLiteReaderPool
    let codec: HistoryCodec
    private let writer: SQLiteWriter
    /// Runs the WAL checkpoints off the writer's commits (see `SQLiteCheckpointer`).
    let checkpointer: SQLiteCheckpointer
    /// The page size of the database file, in bytes (`Configuration.pageSize` applies only to a new file).
    public let pageSize: Int
    private let observers = ChangeObservers(label: "ContextBus.SQLiteStore.observers")
    private let isClosed = AtomicFlag()
    /// How many to-many members `objects(with:)` has read (tests).
    let membersReadByGets = Atomic<Int>(0)

    /// Opens (creating it if needed) the database at `url` for `model`.
    ///
    /// - Throws: `StoreError.modelMismatch` when the file was made with an incompatible model;
    ///   `SQLiteError` when it cannot be opened.
    public init(url: URL, model: Model, configuration: Configuration = Configuration()) throws {
        precondition(configuration.historyRetention >= 1, "historyRetention must be at least 1")
        self.model = model
        self.url = url
        schema = SQLSchema(model: model)
        var tables: [String: SQLiteEntityTable] = [:]
        for entity in model.entities { tables[entity.name] = SQLiteEntityTable(entity: entity, schema: schema) }
        self.tables = tables
        codec = HistoryCodec(model: model)
        let connection = try SQLiteConnection(
            path: url.path, readOnly: false, busyTimeoutMilliseconds: configuration.busyTimeoutMilliseconds,
            vfs: WALWriteGathering.vfsName)
        // Only a file with no pages yet takes a page size; SQLite ignores the pragma for any other.
        if let pageSize = configuration.pageSize { try connection.execute("PRAGMA page_size=\(pageSize)") }
        try connection.execute("PRAGMA journal_mode=WAL")
        pageSize = Int(try connection.integer("PRAGMA page_size") ?? 0)
        try SQLiteSchemaSetup.prepare(connection, for: model)
        checkpointer = try SQLiteCheckpointer(
            path: url.path, thresholdPages: configuration.checkpointThresholdPages,
            busyTimeoutMilliseconds: configuration.busyTimeoutMilliseconds)
        try checkpointer.takeOverCheckpoints(of: connection)
        writer = try SQLiteWriter(
            connection: connection, model: model, tables: tables, historyRetention: configuration.historyRetention,
            observers: observers, checkpointer: checkpointer)
        let writer = writer
        checkpointer.completionWanted.withLock { $0 = { [weak writer] in writer?.checkpointWhenIdle() } }
        readers = SQLiteReaderPool(
            path: url.path, capacity: configuration.readConnections,
            busyTimeoutMilliseconds: configuration.busyTimeoutMilliseconds)
    }

    deinit { close() }

    /// Answers the saves already queued, then closes every connection. Later calls fail with
    /// `StoreError.unavailable`.
    public func close() {
        guard isClosed.setOnce() else { return }
        checkpointer.stop()
        writer.close()
        readers.close()
    }

    public var lastTransaction: Int64 { writer.lastCommitted.load(ordering: .acquiring) }

    /// The last transaction a sync made durable: a power cut keeps it and every one before it (`DurablePosition`;
    /// 0 until the writer has synced). On the durable path it is `lastTransaction`.
    public var durableTransaction: Int64 { writer.durable.transaction }

    /// Asks for every committed transaction to be made durable soon (within `DurablePosition.interval`), without
    /// waiting; nothing happens when they are already.
    public func makeDurableSoon() { writer.makeDurableSoon() }

    /// The writer's group-commit counters.
    public var statistics: Statistics { writer.statistics.withLock { $0 } }

    /// The checkpointer's counters.
    public var checkpointStatistics: CheckpointStatistics { checkpointer.statistics }

    public func save(_ request: SaveRequest) throws -> SaveResult {
        guard !isClosed.isSet else { throw StoreError.unavailable("the store is closed") }
        return try writer.submit(request)
    }

    public func obtainPermanentIDs(entity: String, count: Int) throws -> [ObjectID] {
        guard model.entity(named: entity) != nil else {
            throw StoreError.invalidRequest(field: "entity", message: "unknown entity '\(entity)'")
        }
        guard count >= 0 else { throw StoreError.invalidRequest(field: "count", message: "must not be negative") }
        guard count > 0 else { return [] }
        let first = try writer.reserve(entity: entity, count: count)
        return (0..<Int64(count)).map { ObjectID(entity: entity, number: first + $0) }
    }

    public func objects(with ids: [ObjectID]) throws -> StoreObjectsResult {
        try readers.read { connection, txn in
            var result = StoreObjectsResult(txn: txn, objects: [], missing: [])
            for id in ids {
                if let number = id.number, let table = tables[id.entity],
                    let snapshot = try table.snapshot(number: number, on: connection)
                {
                    if !table.toMany.isEmpty {
                        let members = table.toMany.reduce(0) {
                            $0 + (snapshot.values[$1.relationship.name]?.referencedIDs.count ?? 0)
                        }
                        membersReadByGets.add(members, ordering: .relaxed)
                    }
                    result.objects.append(snapshot)
                } else {
                    result.missing.append(id)
                }
            }
            return result
        }
    }

    public func history(since: Int64, limit: Int) throws -> [ChangeSet] {
        guard limit >= 0 else { throw StoreError.invalidRequest(field: "limit", message: "must not be negative") }
        let since = max(since, 0)
        return try readers.read { connection, txn in
            guard since < txn, limit > 0 else { return [] }
            let oldest = try connection.integer("SELECT MIN(\"Z_TXN\") FROM \"Z_HISTORY\"")
            guard let oldest, since >= oldest - 1 else {
                throw StoreError.historyUnavailable(since: since, oldest: oldest ?? txn + 1)
            }
            let statement = try connection.statement(
                """
                SELECT "Z_TXN", "Z_TIME", "Z_AUTHOR", "Z_CHANGES" FROM "Z_HISTORY" WHERE "Z_TXN" > ?
                ORDER BY "Z_TXN" LIMIT ?
                """)
            defer { statement.reset() }
            try statement.bind(since, at: 1)
            try statement.bind(Int64(limit), at: 2)
            var changes: [ChangeSet] = []
            while try statement.step() {
                changes.append(
                    try codec.decode(
                        statement.text(at: 3), txn: statement.int64(at: 0),
                        time: Date(timeIntervalSinceReferenceDate: statement.double(at: 1)),
                        author: statement.isNull(at: 2) ? nil : statement.text(at: 2)))
            }
            statement.reset()
            return changes
        }
    }

    public func observeChanges(_ observer: @escaping @Sendable (ChangeSet) -> Void) -> StoreObservation {
        observers.add(observer)
    }

    /// Whether `close()` has been called (for `save(_:completion:)`).
    var isClosedForSaves: Bool { isClosed.isSet }

    /// The writer (for `save(_:completion:)`).
    var writerForSaves: SQLiteWriter { writer }

    /// Holds the writer until the returned function is called; saves queue up meanwhile (tests).
    func suspendWriter() -> @Sendable () -> Void { writer.suspend() }

    /// Makes the writer's next gathered WAL write fail as a failing disk would (tests).
    func failNextWALWrite() { writer.failNextWALWrite() }

    /// How many to-many members the writer has read while planning saves (tests).
    var toManyMembersReadBySaves: Int { writer.membersRead.load(ordering: .relaxed) }

    /// Calls `hook` on the writer's queue whenever the saves of a group so far are applied, before
    /// saves queued meanwhile join the group (tests); `nil` removes it.
    func whenGroupApplied(_ hook: (@Sendable () -> Void)?) { writer.groupAppliedHook.withLock { $0 = hook } }

    /// The number of saves waiting for the writer (tests).
    var pendingSaveCount: Int { writer.pendingCount }

    /// Waits until every change set committed so far has been delivered to observers.
    public func waitForObservers() {
        observers.waitForDelivery()
    }
}
