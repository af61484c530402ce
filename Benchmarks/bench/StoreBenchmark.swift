import CContextBusSQLite
import ContextBusObjectGraph
import ContextBusSQLite
import Dispatch
import Foundation
@preconcurrency import Glibc
import Synchronization

/// `scripts/bench store`: the SQLite store's save and fetch rates next to the same workloads done
/// directly through the SQLite C API, in the same run, on the same disk.
enum StoreBenchmark {
    /// How long each workload runs.
    static let duration: Duration = .seconds(2)

    static func run() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "ctxbus-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        print(
            "store benchmark (\(directory.path), \(ProcessInfo.processInfo.activeProcessorCount) CPUs, \(duration) per row)"
        )

        let raw = try RawSQLite(path: directory.appendingPathComponent("raw.sqlite").path)
        let rawOne = try raw.insertRate(rowsPerTransaction: 1)
        let rawEight = try raw.insertRate(rowsPerTransaction: 8)
        let rawThousand = try raw.insertRate(rowsPerTransaction: 1_000)
        try raw.seedForSelects()
        let rawSelect = try raw.selectRate()

        let store = try SQLiteStore(url: directory.appendingPathComponent("store.sqlite"), model: Model.deviceReadings)
        defer { store.close() }
        let one = try saveRate(store, threads: 1, objectsPerSave: 1)
        let eight = try saveRate(store, threads: 8, objectsPerSave: 1)
        let groups = store.statistics
        let thousand = try saveRate(store, threads: 1, objectsPerSave: 1_000)
        try seed(store)
        let fetch = try fetchRate(store)

        var table = BenchTable(columns: ["workload", "store", "raw SQLite", "store / raw"])
        table.add("1-object durable saves/s, 1 thread", one.saves, "1-row txns/s", rawOne.transactions)
        table.add("1-object durable saves/s, 8 threads", eight.saves, "1-row txns/s", rawOne.transactions)
        table.add("  same, against raw 8 rows per txn", eight.saves, "rows/s at 8 rows/txn", rawEight.rows)
        table.add("1,000-object saves: objects/s", thousand.objects, "rows/s at 1,000/txn", rawThousand.rows)
        table.add(
            "  same, per CPU-second of the process", thousand.objectsPerCPUSecond, "rows per CPU-second",
            rawThousand.rowsPerCPUSecond)
        table.add("fetch 100 by indexed predicate/s", fetch, "indexed selects/s", rawSelect)
        table.print()
        print(
            "group commit: \(groups.groups) transactions for \(groups.saves) saves so far, largest group \(groups.largestGroup)"
        )
    }

    // MARK: - Store workloads

    private static func readingValues(_ i: Int) -> [String: PropertyValue] {
        [
            "characteristic": .string("2a\(i % 100)"), "value": .binary(Data([1, 2, 3, 4, 5, 6, 7, 8])),
            "time": .date(Date(timeIntervalSince1970: Double(i))),
        ]
    }

    /// Saves of `objectsPerSave` new readings from `threads` threads for `duration`.
    static func saveRate(
        _ store: SQLiteStore, threads: Int, objectsPerSave: Int, duration: Duration = duration
    ) throws -> (saves: Double, objects: Double, objectsPerCPUSecond: Double) {
        let saves = Atomic<Int>(0)
        let failure = Mutex<(any Error)?>(nil)
        let deadline = ContinuousClock.now + duration
        let start = ContinuousClock.now
        let cpuStart = processCPUSeconds()
        let finished = DispatchGroup()
        for worker in 0..<threads {
            finished.enter()
            let thread = Thread {
                defer { finished.leave() }
                var n = 0
                while ContinuousClock.now < deadline {
                    let inserts = (0..<objectsPerSave).map { i in
                        SaveRequest.Insert(
                            id: ObjectID(entity: "Reading", temporaryReference: "r\(i)"),
                            values: readingValues(worker + n + i))
                    }
                    do {
                        _ = try store.save(SaveRequest(inserts: inserts))
                    } catch {
                        failure.withLock { $0 = error }
                        return
                    }
                    n += 1
                    saves.add(1, ordering: .relaxed)
                }
            }
            thread.start()
        }
        finished.wait()
        if let error = failure.withLock({ $0 }) { throw error }
        let seconds = (ContinuousClock.now - start).seconds
        let cpu = processCPUSeconds() - cpuStart
        let count = Double(saves.load(ordering: .relaxed))
        return (count / seconds, count * Double(objectsPerSave) / seconds, count * Double(objectsPerSave) / cpu)
    }

    /// 10,000 readings, 100 per characteristic.
    static func seed(_ store: SQLiteStore) throws {
        for batch in 0..<10 {
            let inserts = (0..<1_000).map { i in
                SaveRequest.Insert(
                    id: ObjectID(entity: "Reading", temporaryReference: "s\(i)"),
                    values: readingValues(batch * 1_000 + i))
            }
            _ = try store.save(SaveRequest(inserts: inserts))
        }
    }

    static func fetchRate(_ store: SQLiteStore) throws -> Double? {
        let predicate = try ObjectPredicate(format: "characteristic == $c")
        var n = 0
        let start = ContinuousClock.now
        while ContinuousClock.now - start < duration {
            let request = FetchRequest(
                entity: "Reading", predicate: predicate, arguments: ["c": .string("2a\(n % 100)")], fetchLimit: 100)
            do {
                guard case .objects(let objects) = try store.fetch(request).content, objects.count == 100 else {
                    throw StoreError.unavailable("the fetch did not return 100 objects")
                }
            } catch StoreError.invalidRequest(field: "where", let message) {
                print("fetch by predicate: n/a (\(message))")
                return nil
            }
            n += 1
        }
        return Double(n) / (ContinuousClock.now - start).seconds
    }
}

/// The same workloads through the C API: a table shaped like the store's `Reading`, WAL, FULL sync.
final class RawSQLite {
    let db: OpaquePointer

    /// Opens (or makes) the file at `path` in WAL mode with FULL sync, then runs `schema`.
    init(path: String, schema: String = RawSQLite.readingSchema) throws {
        var db: OpaquePointer?
        guard sqlite3_open(path, &db) == SQLITE_OK, let db else { throw SQLiteError(code: 1, message: "open \(path)") }
        self.db = db
        try exec("PRAGMA journal_mode=WAL")
        try exec("PRAGMA synchronous=FULL")
        if !schema.isEmpty { try exec(schema) }
    }

    /// A table shaped like the default model's `Reading`, with its indexes.
    static let readingSchema = """
        CREATE TABLE Reading (Z_PK INTEGER PRIMARY KEY, Z_VERSION INTEGER NOT NULL, characteristic TEXT,
            value BLOB, time REAL, chain TEXT, device INTEGER);
        CREATE INDEX Reading_characteristic ON Reading (characteristic);
        CREATE INDEX Reading_device ON Reading (device);
        """

    deinit { sqlite3_close_v2(db) }

    func exec(_ sql: String) throws {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
            throw SQLiteError(code: sqlite3_errcode(db), message: String(cString: sqlite3_errmsg(db)), sql: sql)
        }
    }

    func prepare(_ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw SQLiteError(code: sqlite3_errcode(db), message: String(cString: sqlite3_errmsg(db)), sql: sql)
        }
        return statement
    }

    private var next: Int64 = 0

    private func insert(_ statement: OpaquePointer, _ i: Int64) {
        sqlite3_bind_int64(statement, 1, i)
        sqlite3_bind_int64(statement, 2, 1)
        sqlite3_bind_text(statement, 3, "2a\(i % 100)", -1, csqlite_transient())
        let bytes: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8]
        sqlite3_bind_blob(statement, 4, bytes, 8, csqlite_transient())
        sqlite3_bind_double(statement, 5, Double(i))
        sqlite3_step(statement)
        sqlite3_reset(statement)
    }

    func insertRate(
        rowsPerTransaction: Int, duration: Duration = StoreBenchmark.duration
    ) throws -> (transactions: Double, rows: Double, rowsPerCPUSecond: Double) {
        let statement = try prepare(
            "INSERT INTO Reading (Z_PK, Z_VERSION, characteristic, value, time) VALUES (?, ?, ?, ?, ?)")
        defer { sqlite3_finalize(statement) }
        let timed = try repeatTransactions(for: duration) {
            for _ in 0..<rowsPerTransaction {
                next += 1
                insert(statement, next)
            }
        }
        let rows = Double(timed.transactions * rowsPerTransaction)
        return (Double(timed.transactions) / timed.seconds, rows / timed.seconds, rows / timed.cpuSeconds)
    }

    /// Runs `body` inside `BEGIN IMMEDIATE` … `COMMIT`, transaction after transaction, for `duration`.
    func repeatTransactions(
        for duration: Duration, _ body: () -> Void
    ) throws -> (transactions: Int, seconds: Double, cpuSeconds: Double) {
        var transactions = 0
        let start = ContinuousClock.now
        let cpuStart = processCPUSeconds()
        while ContinuousClock.now - start < duration {
            try exec("BEGIN IMMEDIATE")
            body()
            try exec("COMMIT")
            transactions += 1
        }
        return (transactions, (ContinuousClock.now - start).seconds, processCPUSeconds() - cpuStart)
    }

    /// Transactions of `savesPerTransaction` saves that each write what a one-object store save writes,
    /// with nothing else: the `Reading` row and a `Z_HISTORY` row carrying `historyJSON` (one transaction
    /// number per save, as docs/protocol.md gives each save its own), then the entity's `Z_PRIMARYKEY` counter
    /// once per transaction. No savepoints: the store's writer uses them only to retry a group in which a
    /// save's rows could not be written. The ceiling of any store keeping the issue's history; rates are
    /// saves.
    func storeShapedSaveRate(
        savesPerTransaction: Int, historyJSON: String, duration: Duration = StoreBenchmark.duration
    ) throws -> (transactions: Double, saves: Double, savesPerCPUSecond: Double) {
        try exec(
            """
            CREATE TABLE IF NOT EXISTS Z_PRIMARYKEY (Z_ENTITY TEXT PRIMARY KEY, Z_MAX INTEGER NOT NULL);
            CREATE TABLE IF NOT EXISTS Z_HISTORY (Z_TXN INTEGER PRIMARY KEY, Z_TIME REAL NOT NULL, Z_AUTHOR TEXT,
                Z_CHANGES TEXT NOT NULL);
            INSERT OR IGNORE INTO Z_PRIMARYKEY VALUES ('Reading', 0);
            """)
        let reading = try prepare(
            "INSERT INTO Reading (Z_PK, Z_VERSION, characteristic, value, time) VALUES (?, ?, ?, ?, ?)")
        let history = try prepare("INSERT INTO Z_HISTORY (Z_TXN, Z_TIME, Z_AUTHOR, Z_CHANGES) VALUES (?, ?, ?, ?)")
        let counter = try prepare("UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENTITY = 'Reading'")
        defer { [reading, history, counter].forEach { sqlite3_finalize($0) } }
        func run(_ statement: OpaquePointer) {
            sqlite3_step(statement)
            sqlite3_reset(statement)
        }
        let timed = try repeatTransactions(for: duration) {
            for _ in 0..<savesPerTransaction {
                next += 1
                insert(reading, next)
                sqlite3_bind_int64(history, 1, next)
                sqlite3_bind_double(history, 2, Date().timeIntervalSinceReferenceDate)
                sqlite3_bind_null(history, 3)
                sqlite3_bind_text(history, 4, historyJSON, -1, csqlite_transient())
                run(history)
            }
            sqlite3_bind_int64(counter, 1, next)
            run(counter)
        }
        let saves = Double(timed.transactions * savesPerTransaction)
        return (Double(timed.transactions) / timed.seconds, saves / timed.seconds, saves / timed.cpuSeconds)
    }

    func seedForSelects() throws {
        try exec("DELETE FROM Reading")
        let statement = try prepare(
            "INSERT INTO Reading (Z_PK, Z_VERSION, characteristic, value, time) VALUES (?, ?, ?, ?, ?)")
        defer { sqlite3_finalize(statement) }
        try exec("BEGIN")
        for i in 1...10_000 { insert(statement, Int64(i)) }
        try exec("COMMIT")
    }

    /// Selects of the 100 readings of one characteristic per second; `makingValues` also makes each row into the
    /// `[String: PropertyValue]` a snapshot holds.
    func selectRate(makingValues: Bool = false) throws -> Double {
        let statement = try prepare(
            "SELECT Z_PK, Z_VERSION, characteristic, value, time, chain, device FROM Reading WHERE characteristic = ? ORDER BY Z_PK LIMIT 100"
        )
        defer { sqlite3_finalize(statement) }
        var n = 0
        let start = ContinuousClock.now
        while ContinuousClock.now - start < StoreBenchmark.duration {
            sqlite3_bind_text(statement, 1, "2a\(n % 100)", -1, csqlite_transient())
            var rows = 0
            var objects: [(Int64, [String: PropertyValue])] = []
            while sqlite3_step(statement) == SQLITE_ROW {
                if makingValues {
                    objects.append(
                        (sqlite3_column_int64(statement, 0), Self.values(of: statement)))
                } else {
                    _ = sqlite3_column_int64(statement, 0)
                    _ = sqlite3_column_text(statement, 2)
                    _ = sqlite3_column_blob(statement, 3)
                    _ = sqlite3_column_double(statement, 4)
                }
                rows += 1
            }
            if makingValues && objects.count != rows { throw SQLiteError(code: 0, message: "lost rows") }
            sqlite3_reset(statement)
            guard rows == 100 else { throw SQLiteError(code: 0, message: "select returned \(rows) rows") }
            n += 1
        }
        return Double(n) / (ContinuousClock.now - start).seconds
    }
}

extension RawSQLite {
    /// A `Reading` row's values as a snapshot holds them.
    fileprivate static func values(of statement: OpaquePointer) -> [String: PropertyValue] {
        var values: [String: PropertyValue] = [:]
        values.reserveCapacity(5)
        values["characteristic"] =
            sqlite3_column_text(statement, 2).map { .string(String(cString: $0)) } ?? .null
        let count = Int(sqlite3_column_bytes(statement, 3))
        values["value"] =
            sqlite3_column_blob(statement, 3).map { .binary(Data(bytes: $0, count: count)) } ?? .null
        values["time"] = .date(Date(timeIntervalSince1970: sqlite3_column_double(statement, 4)))
        values["chain"] = sqlite3_column_text(statement, 5).map { .string(String(cString: $0)) } ?? .null
        values["device"] =
            sqlite3_column_type(statement, 6) == SQLITE_NULL
            ? .null : .reference(ObjectID(entity: "Device", number: sqlite3_column_int64(statement, 6)))
        return values
    }
}

/// A plain-text table of rates with ratios.
struct BenchTable {
    let columns: [String]
    var rows: [[String]] = []

    init(columns: [String]) {
        self.columns = columns
    }

    mutating func add(_ workload: String, _ store: Double?, _ rawLabel: String, _ raw: Double) {
        let storeText = store.map { String(format: "%.0f", $0) } ?? "n/a"
        let ratio = store.map { String(format: "%.2f×", $0 / raw) } ?? "n/a"
        rows.append([workload, storeText, String(format: "%.0f %@", raw, rawLabel), ratio])
    }

    func print() {
        let widths = columns.indices.map { i in ([columns[i]] + rows.map { $0[i] }).map(\.count).max() ?? 0 }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { i, cell in cell.padding(toLength: widths[i], withPad: " ", startingAt: 0) }
                .joined(separator: " | ")
        }
        Swift.print(line(columns))
        Swift.print(widths.map { String(repeating: "-", count: $0) }.joined(separator: "-|-"))
        for row in rows { Swift.print(line(row)) }
    }
}

/// CPU time used by the whole process so far: on a machine shared with other work, rates per
/// CPU-second compare the store with raw SQLite where wall-clock rates mostly measure the others.
func processCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

extension Duration {
    fileprivate var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
