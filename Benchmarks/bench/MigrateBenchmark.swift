import CContextBusSQLite
import ContextBusObjectGraph
import ContextBusSQLite
import ContextBusSupport
import Foundation

/// `scripts/bench migrate`: `SQLiteStore`'s in-place migration on a 1,000,000-reading database next to SQLite
/// doing the same schema change by hand, in the same run, each on a fresh copy of one seeded file (issue 24).
///
/// - the migration itself: from the end of the backup to the commit (`SQLiteStore.Configuration.migrationProgress`:
///   `backed up` → `committed`: the changes, the indexes checked, the new model recorded, `COMMIT`), against the
///   same `ALTER TABLE` (or the table rebuild: `CREATE TABLE`, `INSERT … SELECT`, `DROP`, `RENAME`, the indexes
///   again) and one metadata `UPDATE` in one transaction; both in WAL mode with `synchronous=FULL`;
/// - the backup the migration makes first (`planned` → `backed up`: SQLite's online backup API, 1,024 pages a step)
///   against `sqlite3 FILE ".backup COPY"` (the CLI's own process, started and waited for);
/// - the whole `SQLiteStore` open that migrates (planning, backup, migration, the writer's start) for scale.
///
/// Each figure is the best of 3 runs, each on a fresh copy; the goal is a migration within 1.5× of SQLite's.
enum MigrateBenchmark {
    static let readings = 1_000_000
    static let devices = 100

    /// The default model's shape, with an `int` attribute to widen.
    static let model: Model = try! Model(entities: [
        EntityDescription(
            name: "Device",
            attributes: [AttributeDescription("address", .string, indexed: true)],
            relationships: [
                RelationshipDescription(
                    "readings", destination: "Reading", toMany: true, inverse: "device", deleteRule: .cascade)
            ],
            uniqueBy: [["address"]]),
        EntityDescription(
            name: "Reading",
            attributes: [
                AttributeDescription("characteristic", .string, indexed: true),
                AttributeDescription("value", .binary),
                AttributeDescription("time", .date),
                AttributeDescription("chain", .string, optional: true),
                AttributeDescription("level", .int, optional: true),
            ],
            relationships: [RelationshipDescription("device", destination: "Device", inverse: "readings")]),
    ])

    /// `model` with its `Reading` changed by `change`.
    private static func reading(_ change: (inout EntityDescription) -> Void) -> Model {
        var entities = model.entities
        change(&entities[1])
        return try! Model(entities: entities)
    }

    /// One schema change: the new model, and the SQL SQLite alone runs for it.
    struct Workload {
        var name: String
        var model: Model
        var rawLabel: String
        var rawSQL: String
    }

    static let workloads: [Workload] = [
        Workload(
            name: "add an optional attribute",
            model: reading { $0.attributes.append(.init("unit", .string, optional: true)) },
            rawLabel: "ADD COLUMN", rawSQL: #"ALTER TABLE "Reading" ADD COLUMN "unit" TEXT"#),
        Workload(
            name: "add an attribute with a default",
            model: reading { $0.attributes.append(.init("scale", .int, default: .int(1))) },
            rawLabel: "ADD COLUMN … DEFAULT", rawSQL: #"ALTER TABLE "Reading" ADD COLUMN "scale" INTEGER DEFAULT 1"#),
        Workload(
            name: "rename an attribute",
            model: reading { $0.attributes[3] = .init("source", .string, optional: true, renamedFrom: "chain") },
            rawLabel: "RENAME COLUMN", rawSQL: #"ALTER TABLE "Reading" RENAME COLUMN "chain" TO "source""#),
        Workload(
            name: "remove an attribute", model: reading { $0.attributes.remove(at: 3) },
            rawLabel: "DROP COLUMN", rawSQL: #"ALTER TABLE "Reading" DROP COLUMN "chain""#),
        Workload(
            name: "widen an int to double (table rebuild)", model: reading { $0.attributes[4].type = .double },
            rawLabel: "12-step rebuild",
            rawSQL: """
                CREATE TABLE "new_Reading" ("Z_PK" INTEGER PRIMARY KEY, "Z_VERSION" INTEGER NOT NULL,
                    "characteristic" TEXT, "value" BLOB, "time" REAL, "chain" TEXT, "level" REAL, "device" INTEGER);
                INSERT INTO "new_Reading" SELECT "Z_PK", "Z_VERSION", "characteristic", "value", "time", "chain",
                    CAST("level" AS REAL), "device" FROM "Reading";
                DROP TABLE "Reading";
                ALTER TABLE "new_Reading" RENAME TO "Reading";
                CREATE INDEX "Z_Reading_characteristic" ON "Reading" ("characteristic");
                CREATE INDEX "Z_Reading_device" ON "Reading" ("device");
                """),
    ]

    static func run() throws {
        try BenchDirectory.withTemporary { directory in
            let seeded = directory.url.appendingPathComponent("seeded.sqlite")
            print(
                "migrate benchmark (\(directory.url.path), \(ProcessInfo.processInfo.activeProcessorCount) CPUs, "
                    + "load \(loadAverage()))")
            let seedStart = ContinuousClock.now
            try seed(seeded)
            let bytes = (try? FileManager.default.attributesOfItem(atPath: seeded.path)[.size] as? Int) ?? 0
            print(
                "seeded \(readings) readings of \(devices) devices (\(bytes / 1_000_000) MB) in \(ContinuousClock.now - seedStart)"
            )
            var rows: [[String]] = []
            var backups: [Double] = []
            for workload in workloads {
                var store = Timings()
                for run in 0..<3 {
                    let timings = try onCopy(of: seeded, in: directory, name: "store-\(run)") { url in
                        try migrate(url, to: workload.model)
                    }
                    store.keepBest(timings)
                }
                let raw = try (0..<3).map { run in
                    try onCopy(of: seeded, in: directory, name: "raw-\(run)") { url in
                        try rawChange(url, workload.rawSQL)
                    }
                }.min()!
                backups.append(store.backup)
                rows.append([
                    workload.name, milliseconds(store.migration), "\(milliseconds(raw)) \(workload.rawLabel)",
                    String(format: "%.2f×", store.migration / raw), milliseconds(store.open),
                ])
            }
            let cli = try (0..<3).map { run in try cliBackup(of: seeded, to: directory.path("cli-\(run).sqlite")) }
                .min()!
            let backup = backups.min()!
            rows.append([
                "the backup before the migration", milliseconds(backup), "\(milliseconds(cli)) sqlite3 .backup",
                String(format: "%.2f×", backup / cli), "",
            ])
            printTable(
                ["workload (1,000,000 readings)", "store", "raw SQLite", "store / raw", "whole open"], rows)
            print("(times in ms, best of 3 runs on fresh copies; load \(loadAverage()) after the run)")
        }
    }

    /// What one migrating open took, in seconds.
    struct Timings {
        var backup = Double.infinity
        var migration = Double.infinity
        var open = Double.infinity

        mutating func keepBest(_ other: Timings) {
            backup = min(backup, other.backup)
            migration = min(migration, other.migration)
            open = min(open, other.open)
        }
    }

    /// Opens `url` with `model`, timing the points the migration passes.
    private static func migrate(_ url: URL, to model: Model) throws -> Timings {
        let points = Locked([String: ContinuousClock.Instant]())
        var configuration = SQLiteStore.Configuration(historyRetention: 10)
        configuration.migrationProgress = { name in
            let now = ContinuousClock.now
            points.withLock { $0[name] = $0[name] ?? now }
        }
        let start = ContinuousClock.now
        let store = try SQLiteStore(url: url, model: model, configuration: configuration)
        let opened = ContinuousClock.now
        precondition(store.migration?.canMigrate == true, "the benchmark's migration did not run")
        store.close()
        let marks = points.withLock { $0 }
        guard let planned = marks["planned"], let backedUp = marks["backed up"], let committed = marks["committed"]
        else { preconditionFailure("the migration passed \(marks.keys.sorted())") }
        return Timings(
            backup: seconds(backedUp - planned), migration: seconds(committed - backedUp), open: seconds(opened - start)
        )
    }

    /// The same change by hand: `sql`, and the new model's hash recorded, in one transaction.
    private static func rawChange(_ url: URL, _ sql: String) throws -> Double {
        let raw = try RawSQLite(path: url.path, schema: "")
        let start = ContinuousClock.now
        try raw.exec("BEGIN IMMEDIATE")
        try raw.exec(sql)
        try raw.exec(#"UPDATE "Z_METADATA" SET "Z_VALUE" = 'raw' WHERE "Z_KEY" = 'modelHash'"#)
        try raw.exec("COMMIT")
        return seconds(ContinuousClock.now - start)
    }

    /// `sqlite3 FILE ".backup COPY"`, start to exit.
    private static func cliBackup(of file: URL, to copy: String) throws -> Double {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["sqlite3", file.path, ".backup '\(copy)'"]
        let start = ContinuousClock.now
        try process.run()
        process.waitUntilExit()
        let elapsed = seconds(ContinuousClock.now - start)
        precondition(process.terminationStatus == 0, "sqlite3 .backup failed (is the sqlite3 CLI installed?)")
        try? FileManager.default.removeItem(atPath: copy)
        return elapsed
    }

    /// 100 devices, then 1,000,000 readings in saves of 10,000 (a history of the last 10 kept).
    private static func seed(_ url: URL) throws {
        let store = try SQLiteStore(url: url, model: model, configuration: .init(historyRetention: 10))
        defer { store.close() }
        let saved = try store.save(
            SaveRequest(
                inserts: (0..<devices).map {
                    .init(entity: "Device", ref: "d\($0)", values: ["address": .string("AA:\($0)")])
                }))
        let ids = (0..<devices).map { saved.id(ref: "d\($0)")! }
        var next = 0
        while next < readings {
            let inserts = (next..<min(next + 10_000, readings)).map { i in
                SaveRequest.Insert(
                    entity: "Reading", ref: "r\(i)",
                    values: [
                        "characteristic": .string("2a\(i % 100)"), "value": .binary(Data([UInt8(i % 256), 1, 2, 3])),
                        "time": .date(Date(timeIntervalSince1970: Double(i))),
                        "chain": i % 3 == 0 ? .string("c-\(i % 1000)") : .null, "level": .int(Int64(i % 101)),
                        "device": .reference(ids[i % devices]),
                    ])
            }
            _ = try store.save(SaveRequest(inserts: inserts, durability: .memory))
            next += 10_000
        }
    }

    /// Runs `body` on a fresh copy of `file` (and its WAL), removed afterwards.
    private static func onCopy<T>(
        of file: URL, in directory: BenchDirectory, name: String, _ body: (URL) throws -> T
    )
        throws -> T
    {
        let copy = URL(fileURLWithPath: directory.path("\(name).sqlite"))
        let files = ["", "-wal"].filter { FileManager.default.fileExists(atPath: file.path + $0) }
        for suffix in files { try FileManager.default.copyItem(atPath: file.path + suffix, toPath: copy.path + suffix) }
        defer {
            let dir = directory.url.path
            for name in (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
            where name.hasPrefix(copy.lastPathComponent) {
                try? FileManager.default.removeItem(atPath: dir + "/" + name)
            }
        }
        return try body(copy)
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    private static func milliseconds(_ seconds: Double) -> String { String(format: "%.1f", seconds * 1000) }

    /// `/proc/loadavg`'s three averages.
    private static func loadAverage() -> String {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }

    private static func printTable(_ columns: [String], _ rows: [[String]]) {
        let widths = columns.indices.map { i in ([columns[i]] + rows.map { $0[i] }).map(\.count).max() ?? 0 }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { i, cell in cell.padding(toLength: widths[i], withPad: " ", startingAt: 0) }
                .joined(separator: " | ")
        }
        print(line(columns))
        print(widths.map { String(repeating: "-", count: $0) }.joined(separator: "-|-"))
        for row in rows { print(line(row)) }
    }
}
