import CContextBusSQLite
import Dispatch
import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSQLite
@testable import ContextBusSupport

/// What only the SQLite store has: a file that outlives the process, a model check, migration,
/// group commit.
struct SQLiteStoreTests {
    private let directory: URL
    private var url: URL { directory.appendingPathComponent("store.sqlite") }

    init() throws {
        directory = try TestStore.makeDirectory()
    }

    private func cleanUp() {
        try? FileManager.default.removeItem(at: directory)
    }

    @Test func txnNumbersAndIDsKeepIncreasingAcrossReopen() throws {
        defer { cleanUp() }
        var store = try SQLiteStore(url: url, model: Model.deviceReadings)
        let first = try store.insert("Device", ["address": .string("a")])
        try store.commit(SaveRequest(deletes: [.init(id: first, version: nil)]))
        let reserved = try store.obtainPermanentIDs(entity: "Device", count: 3)
        expectEqual(store.lastTransaction, 2)
        store.close()
        store = try SQLiteStore(url: url, model: Model.deviceReadings)
        expectEqual(store.lastTransaction, 2)
        let result = try store.commit(
            SaveRequest(inserts: [.init(id: tmp("Device", "d"), values: ["address": .string("b")])]))
        expectEqual(result.txn, 3)
        expectGreaterThan(result.ids[tmp("Device", "d")]!.number!, reserved.last!.number!)
        try expectEqual(store.history(since: 0, limit: 10).map(\.txn), [1, 2, 3])
        store.close()
    }

    @Test func aNewFileTakesTheConfiguredPageSizeAndAnExistingOneKeepsItsOwn() throws {
        defer { cleanUp() }
        var store = try SQLiteStore(
            url: url, model: Model.deviceReadings, configuration: .init(historyRetention: 50, pageSize: 2048))
        expectEqual(store.pageSize, 2048)
        // 300 devices with long addresses: several pages of the table and of the index, each of 2,048 bytes.
        let addresses = (0..<300).map { "aa:bb:cc:dd:ee:\($0) with a long tail to fill pages" }
        try store.commit(
            SaveRequest(
                inserts: addresses.map { .init(id: tmp("Device", $0), values: ["address": .string($0)]) }))
        store.close()
        store = try SQLiteStore(url: url, model: Model.deviceReadings, configuration: .init(pageSize: 65_536))
        expectEqual(store.pageSize, 2048)
        expectEqual(try store.all("Device").count, 300)
        store.close()
        let file = try SQLiteConnection(path: url.path, readOnly: true, busyTimeoutMilliseconds: 1_000)
        defer { file.close() }
        try expectEqual(file.integer("PRAGMA page_size"), 2048)
        try expectGreaterThan(file.integer("PRAGMA page_count") ?? 0, 10)
        try expectEqual(file.text("PRAGMA integrity_check"), "ok")
    }

    @Test func withoutAPageSizeAFileHasSQLitesDefault() throws {
        defer { cleanUp() }
        let store = try SQLiteStore(url: url, model: Model.deviceReadings)
        defer { store.close() }
        expectEqual(store.pageSize, 4096)
        expectFalse(SQLiteStore.Configuration.isValidPageSize(3000))
        expectFalse(SQLiteStore.Configuration.isValidPageSize(131_072))
        expectTrue(SQLiteStore.Configuration.isValidPageSize(512))
    }

    @Test func aDatabaseMadeWithAModelItCannotBeMigratedFromIsRefused() throws {
        defer { cleanUp() }
        try SQLiteStore(url: url, model: Model.deviceReadings).close()
        var entities = Model.deviceReadings.entities
        entities[0].attributes[3].type = .string
        let retyped = try Model(entities: entities)
        let error = storeError { _ = try SQLiteStore(url: url, model: retyped) }
        expectEqual(
            error,
            .migrationRefused(
                stored: Model.deviceReadings.versionHash, expected: retyped.versionHash,
                differences: [
                    "Device.lastSeen: cannot be migrated: type changed from date to string (only int to double can be migrated)"
                ]))
        // Making a required attribute optional is migrated in place.
        entities = Model.deviceReadings.entities
        entities[0].attributes[0].isOptional = true
        let changed = try Model(entities: entities)
        let store = try SQLiteStore(url: url, model: changed)
        expectEqual(store.migration?.lines, ["ok       Device.address: made optional"])
        store.close()
    }

    /// `A.b_c ↔ B.x` and `A_b.c ↔ B.y` both map to the join table `Z_M2M_A_b_c`; sharing it would mix
    /// the two relationships' rows, so the store refuses the model.
    @Test func manyToManyPairsWhoseJoinTablesWouldCoincideAreRefused() throws {
        defer { cleanUp() }
        let model = try Model(entities: [
            EntityDescription(
                name: "A", relationships: [RelationshipDescription("b_c", destination: "B", toMany: true, inverse: "x")]
            ),
            EntityDescription(
                name: "A_b", relationships: [RelationshipDescription("c", destination: "B", toMany: true, inverse: "y")]
            ),
            EntityDescription(
                name: "B",
                relationships: [
                    RelationshipDescription("x", destination: "A", toMany: true, inverse: "b_c"),
                    RelationshipDescription("y", destination: "A_b", toMany: true, inverse: "c"),
                ]),
        ])
        do {
            try SQLiteStore(url: url, model: model).close()
            Issue.record("the store opened a model whose join tables coincide")
        } catch {
            expectTrue("\(error)".contains("would share the join table Z_M2M_A_b_c"))
        }
    }

    @Test func addingAnOptionalAttributeMigratesInPlace() throws {
        defer { cleanUp() }
        var store = try SQLiteStore(url: url, model: Model.deviceReadings)
        let device = try store.insert("Device", ["address": .string("a")])
        store.close()
        var entities = Model.deviceReadings.entities
        entities[0].attributes.append(AttributeDescription("firmware", .string, optional: true, indexed: true))
        entities[0].attributes.append(AttributeDescription("battery", .int, optional: true, default: .int(100)))
        let newer = try Model(entities: entities)
        store = try SQLiteStore(url: url, model: newer)
        let snapshot = try #require(try store.snapshot(device))
        expectEqual(snapshot.values["firmware"], .null)
        expectEqual(snapshot.values["battery"], .int(100))
        try store.commit(SaveRequest(updates: [.init(id: device, version: 1, values: ["firmware": .string("1.2")])]))
        try expectEqual(store.snapshot(device)?.values["firmware"], .string("1.2"))
        try expectEqual(store.history(since: 0, limit: 10).count, 2)
        store.close()
        // And the new model is what the file now holds.
        store = try SQLiteStore(url: url, model: newer)
        store.close()
    }

    @Test func savesWaitingForTheWriterCommitAsOneGroupAndAFailingOneFailsAlone() throws {
        defer { cleanUp() }
        let store = try SQLiteStore(url: url, model: Model.deviceReadings)
        let device = try store.insert("Device", ["address": .string("x")])
        let groupsBefore = store.statistics.groups
        let outcomes = Locked<[Int: Result<SaveResult, any Error>]>([:])
        let finished = DispatchGroup()
        let threads = 6
        let resume = store.suspendWriter()
        for worker in 0..<threads {
            finished.enter()
            DispatchQueue.global().async {
                let request =
                    worker == 2
                    ? SaveRequest(updates: [.init(id: device, version: 42, values: ["name": .string("stale")])])
                    : SaveRequest(inserts: [
                        .init(id: tmp("Device", "d\(worker)"), values: ["address": .string("\(worker)")])
                    ])
                let outcome = Result { try store.save(request) }
                outcomes.withLock { $0[worker] = outcome }
                finished.leave()
            }
        }
        while store.pendingSaveCount < threads { usleep(1_000) }  // every save is queued behind the held writer
        resume()
        finished.wait()
        expectEqual(store.statistics.groups - groupsBefore, 1)
        expectEqual(store.statistics.lastGroupSize, threads)
        var txns: [Int64] = []
        for (worker, outcome) in outcomes.withLock({ $0 }) {
            switch outcome {
            case .success(let result):
                expectNotEqual(worker, 2)
                txns.append(result.txn)
                try expectEqual(store.snapshot(result.ids.values.first!)?.version, 1)
            case .failure(let error):
                expectEqual(worker, 2)
                guard case .conflict? = error as? StoreError else {
                    Issue.record("expected a conflict, got \(error)")
                    continue
                }
            }
        }
        expectEqual(txns.sorted(), Array(2...Int64(threads)))
        try expectEqual(store.history(since: 1, limit: 10).map(\.txn), Array(2...Int64(threads)))
        try expectEqual(store.all("Device").count, threads)
        store.close()
    }

    @Test func memoryDurabilitySavesCommitAndReadBack() throws {
        defer { cleanUp() }
        var store = try SQLiteStore(url: url, model: Model.deviceReadings)
        let result = try store.commit(
            SaveRequest(
                inserts: [.init(id: tmp("Device", "m"), values: ["address": .string("m")])], durability: .memory))
        store.close()
        store = try SQLiteStore(url: url, model: Model.deviceReadings)
        try expectEqual(store.snapshot(result.ids[tmp("Device", "m")]!)?.values["address"], .string("m"))
        store.close()
    }

    @Test func aClosedStoreRefusesWork() throws {
        defer { cleanUp() }
        let store = try SQLiteStore(url: url, model: Model.deviceReadings)
        store.close()
        expectEqual(
            storeError { _ = try store.insert("Device", ["address": .string("a")]) },
            .unavailable("the store is closed"))
        expectEqual(
            storeError { _ = try store.fetch(FetchRequest(entity: "Device")) }, .unavailable("the store is closed"))
    }

    @Test func theFileFollowsTheSchemaConventions() throws {
        defer { cleanUp() }
        let store = try SQLiteStore(url: url, model: TestModels.library)
        let author = try store.insert("Author", ["name": .string("a")])
        try store.insert("Book", ["title": .string("t"), "authors": .references([author]), "inPrint": .bool(true)])
        store.close()
        var db: OpaquePointer?
        expectEqual(sqlite3_open(url.path, &db), SQLITE_OK)
        defer { sqlite3_close(db) }
        func rows(_ sql: String) -> [[String]] {
            var statement: OpaquePointer?
            guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else { return [["error"]] }
            defer { sqlite3_finalize(statement) }
            var rows: [[String]] = []
            while sqlite3_step(statement) == SQLITE_ROW {
                rows.append(
                    (0..<sqlite3_column_count(statement)).map { i in
                        sqlite3_column_text(statement, i).map { String(cString: $0) } ?? "NULL"
                    })
            }
            return rows
        }
        expectEqual(rows("SELECT Z_PK, Z_VERSION, title, inPrint, pages FROM Book"), [["1", "1", "t", "1", "0"]])
        expectEqual(rows("SELECT Z_SOURCE, Z_TARGET FROM Z_M2M_Author_books"), [["1", "1"]])
        expectEqual(rows("PRAGMA journal_mode"), [["wal"]])
        expectEqual(
            rows("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'Z_Book_%' ORDER BY name"),
            [
                ["Z_Book_shelf"], ["Z_Book_title"],
            ])
        expectEqual(
            rows("SELECT Z_ENTITY, Z_MAX FROM Z_PRIMARYKEY WHERE Z_MAX > 0 ORDER BY Z_ENTITY"),
            [
                ["Author", "1"], ["Book", "1"],
            ])
    }

    @Test func aSaveAloneInItsGroupThatFailsWhileWritingLeavesNoRowBehind() throws {
        defer { cleanUp() }
        let store = try SQLiteStore(url: url, model: Model.deviceReadings)
        defer { store.close() }
        let first = try store.insert("Device", ["address": .string("first")])
        // A history row in the way of the next transaction: the save's rows are written, then
        // its history row fails, after the objects were inserted.
        var db: OpaquePointer?
        expectEqual(sqlite3_open(url.path, &db), SQLITE_OK)
        defer { sqlite3_close(db) }
        let blocker = "INSERT INTO Z_HISTORY (Z_TXN, Z_TIME, Z_CHANGES) VALUES (2, 0, '{}')"
        expectEqual(sqlite3_exec(db, blocker, nil, nil, nil), SQLITE_OK)
        let inserts = (0..<3).map {
            SaveRequest.Insert(id: tmp("Device", "d\($0)"), values: ["address": .string("\($0)")])
        }
        #expect(throws: SQLiteError.self) { try store.save(SaveRequest(inserts: inserts)) }
        try expectEqual(store.all("Device").map(\.id), [first])
        expectEqual(store.lastTransaction, 1)
        expectEqual(sqlite3_exec(db, "DELETE FROM Z_HISTORY WHERE Z_TXN = 2", nil, nil, nil), SQLITE_OK)
        let result = try store.commit(SaveRequest(inserts: inserts))
        expectTrue(result.txn == 2 && result.changes!.inserted.count == 3)
        try expectEqual(store.all("Device").count, 4)
    }
}
