import CContextBusSQLite
import ContextBusObjectGraph
import ContextBusSQLite
import ContextBusSupport
import Dispatch
import Foundation

/// `scripts/bench storedata`: the store's batch delete, aggregate and upsert next to the same work done by SQLite
/// alone, in the same run, on copies of one file (issue 23's benchmarks).
///
/// - batch delete of 100,000 of 1,000,000 readings (`store.batch`'s path: one transaction, the history row listing
///   every deleted object with its values, until the change set has reached a subscriber of the store) against
///   `DELETE … WHERE` plus one history row built by SQLite's JSON functions from the same rows;
/// - a batch `set` of the same 100,000 (`number` = -1; not one of the issue's goals) against `UPDATE … WHERE` plus
///   a history row of the rows' values and previous numbers;
/// - the average number per device per hour over the 1,000,000 readings (`SQLiteStore.aggregate`) against the same
///   `GROUP BY` query;
/// - an upsert of 1,000 devices, half of them existing, in one save (merge policy `objectTrump`) against
///   `INSERT … ON CONFLICT(address) DO UPDATE` of the same rows plus a history row.
enum StoreDataBenchmark {
    static let readings = 1_000_000
    static let devices = 100

    /// A model like the default one, with `Reading.number` to average.
    static let model: Model = try! Model(entities: [
        EntityDescription(
            name: "Device",
            attributes: [
                AttributeDescription("address", .string, indexed: true),
                AttributeDescription("name", .string, optional: true),
            ],
            relationships: [
                RelationshipDescription(
                    "readings", destination: "Reading", toMany: true, inverse: "device", deleteRule: .cascade)
            ],
            uniqueBy: [["address"]]),
        EntityDescription(
            name: "Reading",
            attributes: [
                AttributeDescription("characteristic", .string, indexed: true),
                AttributeDescription("time", .date, indexed: true),
                AttributeDescription("number", .double, optional: true),
            ],
            relationships: [RelationshipDescription("device", destination: "Device", inverse: "readings")]),
    ])

    static func run() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "ctxbus-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let seeded = directory.appendingPathComponent("seeded.sqlite")
        print("store data benchmark (\(directory.path), \(ProcessInfo.processInfo.activeProcessorCount) CPUs)")
        let seedStart = ContinuousClock.now
        try seed(seeded)
        print("seeded \(readings) readings of \(devices) devices in \(ContinuousClock.now - seedStart)")

        var table = BenchTable(columns: ["workload", "store", "raw SQLite", "store / raw"])
        let storeDelete = try timedOnCopy(of: seeded, in: directory, name: "store-delete") { url in
            let store = try SQLiteStore(url: url, model: model, configuration: .init(historyRetention: 1_000))
            defer { store.close() }
            // A subscriber: the clock stops once the delete's change set has been delivered to it (what storesvc's
            // subscription hub turns into `store.changed` events).
            let delivered = DispatchSemaphore(value: 0)
            let deletedSeen = Locked(0)
            let observation = store.observeChanges { changes in
                deletedSeen.withLock { $0 = changes.deleted.count }
                delivered.signal()
            }
            defer { observation.cancel() }
            return try timed {
                let result = try store.batch(
                    BatchRequest(
                        entity: "Reading", where: try ObjectPredicate(format: "time < $cutoff"),
                        arguments: ["cutoff": .date(Date(timeIntervalSince1970: Double(readings / 10)))],
                        action: .delete))
                precondition(result.count == readings / 10, "deleted \(result.count)")
                delivered.wait()
                precondition(deletedSeen.withLock { $0 } == readings / 10, "delivered \(deletedSeen.withLock { $0 })")
            }
        }
        let rawDelete = try timedOnCopy(of: seeded, in: directory, name: "raw-delete") { url in
            let raw = try RawSQLite(path: url.path, schema: "")
            return try timed {
                try raw.exec("BEGIN IMMEDIATE")
                try raw.exec(
                    """
                    INSERT INTO "Z_HISTORY" ("Z_TXN", "Z_TIME", "Z_AUTHOR", "Z_CHANGES")
                    SELECT (SELECT MAX("Z_TXN") FROM "Z_HISTORY") + 1, 0, NULL, json_object('d', json_group_array(
                        json_object('i', "Z_PK", 'v', "Z_VERSION", 'c', "characteristic", 't', "time", 'n', "number",
                            'd', "device")))
                    FROM "Reading" WHERE "time" < \(readings / 10)
                    """)
                try raw.exec(#"DELETE FROM "Reading" WHERE "time" < \#(readings / 10)"#)
                try raw.exec("COMMIT")
            }
        }
        table.add(
            "batch delete of 100,000 of 1,000,000 readings: /s", 1 / storeDelete, "DELETE … WHERE + history/s",
            1 / rawDelete)

        let storeSet = try timedOnCopy(of: seeded, in: directory, name: "store-set") { url in
            let store = try SQLiteStore(url: url, model: model, configuration: .init(historyRetention: 1_000))
            defer { store.close() }
            let delivered = DispatchSemaphore(value: 0)
            let observation = store.observeChanges { _ in delivered.signal() }
            defer { observation.cancel() }
            return try timed {
                let result = try store.batch(
                    BatchRequest(
                        entity: "Reading", where: try ObjectPredicate(format: "time < $cutoff"),
                        arguments: ["cutoff": .date(Date(timeIntervalSince1970: Double(readings / 10)))],
                        action: .set(["number": .double(-1)])))
                precondition(result.changes?.updated.count == readings / 10, "set \(result.count)")
                delivered.wait()
            }
        }
        let rawSet = try timedOnCopy(of: seeded, in: directory, name: "raw-set") { url in
            let raw = try RawSQLite(path: url.path, schema: "")
            return try timed {
                try raw.exec("BEGIN IMMEDIATE")
                try raw.exec(
                    """
                    INSERT INTO "Z_HISTORY" ("Z_TXN", "Z_TIME", "Z_AUTHOR", "Z_CHANGES")
                    SELECT (SELECT MAX("Z_TXN") FROM "Z_HISTORY") + 1, 0, NULL, json_object('u', json_group_array(
                        json_array(json_object('i', "Z_PK", 'v', "Z_VERSION" + 1, 'c', "characteristic", 't', "time",
                            'n', -1, 'd', "device"), json_array('number'), json_object('number', "number"))))
                    FROM "Reading" WHERE "time" < \(readings / 10)
                    """)
                try raw.exec(
                    #"UPDATE "Reading" SET "number" = -1, "Z_VERSION" = "Z_VERSION" + 1 WHERE "time" < \#(readings / 10)"#
                )
                try raw.exec("COMMIT")
            }
        }
        table.add(
            "batch set of 100,000 of 1,000,000 readings: /s", 1 / storeSet, "UPDATE … WHERE + history/s", 1 / rawSet)

        let store = try SQLiteStore(url: seeded, model: model, configuration: .init(historyRetention: 1_000))
        let request = AggregateRequest(
            entity: "Reading", groupBy: ["device"], bucket: .init(key: "time", seconds: 3600),
            values: ["mean": .average("number")])
        let storeAggregate = try bestOf(3) { try timed { _ = try store.aggregate(request) } }
        let groups = try store.aggregate(request).groups.count
        store.close()
        let raw = try RawSQLite(path: seeded.path, schema: "")
        let rawAggregate = try bestOf(3) {
            try timed {
                let statement = try raw.prepare(
                    """
                    SELECT "device", CAST("time" / 3600 AS INTEGER) * 3600, AVG("number") FROM "Reading"
                    GROUP BY 1, 2 ORDER BY 1, 2
                    """)
                defer { sqlite3_finalize(statement) }
                while sqlite3_step(statement) == SQLITE_ROW {}
            }
        }
        table.add(
            "avg per device per hour over 1,000,000: queries/s", 1 / storeAggregate, "same GROUP BY/s", 1 / rawAggregate
        )

        let storeUpsert = try timedOnCopy(of: seeded, in: directory, name: "store-upsert") { url in
            let store = try SQLiteStore(url: url, model: model, configuration: .init(historyRetention: 1_000))
            defer { store.close() }
            let inserts = (0..<1_000).map { i in
                SaveRequest.Insert(
                    entity: "Device", ref: "d\(i)",
                    values: ["address": .string(address(i + devices - 500)), "name": .string("n\(i)")])
            }
            return try timed { _ = try store.save(SaveRequest(inserts: inserts, mergePolicy: .objectTrump)) }
        }
        let rawUpsert = try timedOnCopy(of: seeded, in: directory, name: "raw-upsert") { url in
            let raw = try RawSQLite(path: url.path, schema: "")
            let statement = try raw.prepare(
                """
                INSERT INTO "Device" ("Z_PK", "Z_VERSION", "address", "name") VALUES (?, 1, ?, ?)
                ON CONFLICT("address") DO UPDATE SET "name" = excluded."name", "Z_VERSION" = "Z_VERSION" + 1
                """)
            defer { sqlite3_finalize(statement) }
            return try timed {
                try raw.exec("BEGIN IMMEDIATE")
                var history = "["
                for i in 0..<1_000 {
                    sqlite3_bind_int64(statement, 1, Int64(devices + 1 + i))
                    sqlite3_bind_text(statement, 2, address(i + devices - 500), -1, csqlite_transient())
                    sqlite3_bind_text(statement, 3, "n\(i)", -1, csqlite_transient())
                    guard sqlite3_step(statement) == SQLITE_DONE else { throw SQLiteError(code: 1, message: "upsert") }
                    sqlite3_reset(statement)
                    history += #"{"i":\#(devices + 1 + i),"a":"\#(address(i + devices - 500))","n":"n\#(i)"},"#
                }
                history += "]"
                let insertHistory = try raw.prepare(
                    #"INSERT INTO "Z_HISTORY" ("Z_TXN", "Z_TIME", "Z_AUTHOR", "Z_CHANGES") VALUES ((SELECT MAX("Z_TXN") FROM "Z_HISTORY") + 1, 0, NULL, ?)"#
                )
                sqlite3_bind_text(insertHistory, 1, history, -1, csqlite_transient())
                sqlite3_step(insertHistory)
                sqlite3_finalize(insertHistory)
                try raw.exec("COMMIT")
            }
        }
        table.add(
            "upsert of 1,000 devices, half existing: saves/s", 1 / storeUpsert, "INSERT … ON CONFLICT/s", 1 / rawUpsert)
        table.print()
        func ms(_ seconds: Double) -> String { String(format: "%.0f ms", seconds * 1000) }
        print(
            "times, store / raw: batch delete \(ms(storeDelete)) / \(ms(rawDelete)), batch set \(ms(storeSet)) / "
                + "\(ms(rawSet)), aggregate \(ms(storeAggregate)) / "
                + "\(ms(rawAggregate)), upsert \(ms(storeUpsert)) / \(ms(rawUpsert))")
        print(
            "(\(groups) groups; each figure the time of one run on a fresh copy of the seeded file, the aggregate the best of 3)"
        )
    }

    private static func address(_ i: Int) -> String { "AA:\(i)" }

    /// 100 devices, then 1,000,000 readings, one a second from the epoch, in saves of 10,000.
    private static func seed(_ url: URL) throws {
        let store = try SQLiteStore(url: url, model: model, configuration: .init(historyRetention: 10))
        defer { store.close() }
        let deviceIDs = try store.save(
            SaveRequest(
                inserts: (0..<devices).map {
                    .init(entity: "Device", ref: "d\($0)", values: ["address": .string(address($0))])
                }))
        let ids = (0..<devices).map { deviceIDs.id(ref: "d\($0)")! }
        var next = 0
        while next < readings {
            let inserts = (next..<min(next + 10_000, readings)).map { i in
                SaveRequest.Insert(
                    entity: "Reading", ref: "r\(i)",
                    values: [
                        "characteristic": .string("2a19"), "time": .date(Date(timeIntervalSince1970: Double(i))),
                        "number": .double(Double(i % 97)), "device": .reference(ids[i % devices]),
                    ])
            }
            _ = try store.save(SaveRequest(inserts: inserts, durability: .memory))
            next += 10_000
        }
    }

    /// Runs `body` on a copy of `file` (and its WAL, if any) and returns what it returns.
    private static func timedOnCopy(
        of file: URL, in directory: URL, name: String, _ body: (URL) throws -> Double
    ) throws -> Double {
        let copy = directory.appendingPathComponent("\(name).sqlite")
        try FileManager.default.copyItem(at: file, to: copy)
        for suffix in ["-wal", "-shm"] {
            let side = URL(fileURLWithPath: file.path + suffix)
            if FileManager.default.fileExists(atPath: side.path) {
                try FileManager.default.copyItem(at: side, to: URL(fileURLWithPath: copy.path + suffix))
            }
        }
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: copy.path + suffix) }
        }
        return try body(copy)
    }

    /// The seconds `body` takes.
    private static func timed(_ body: () throws -> Void) throws -> Double {
        let start = ContinuousClock.now
        try body()
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    private static func bestOf(_ runs: Int, _ body: () throws -> Double) throws -> Double {
        var best = Double.infinity
        for _ in 0..<runs { best = min(best, try body()) }
        return best
    }
}
