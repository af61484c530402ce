import CContextBusSQLite
import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSQLite

/// Where `SQLiteStore` keeps its last transaction number: the newest `Z_HISTORY` row, with
/// `Z_METADATA.lastTxn` as a floor written only when history is pruned and at close (not in
/// every commit: one WAL frame less per commit).
struct SQLiteStoreTransactionNumberTests {
    private let directory: URL
    private var url: URL { directory.appendingPathComponent("store.sqlite") }

    init() throws {
        directory = try TestStore.makeDirectory()
    }

    private func cleanUp() {
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs `sql` on a connection of its own (beside the store's) and returns the first column of
    /// the first row as an integer, `nil` for none.
    private func integer(_ sql: String) -> Int64? {
        var db: OpaquePointer?
        guard sqlite3_open(url.path, &db) == SQLITE_OK else { return nil }
        defer { sqlite3_close(db) }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else { return nil }
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW, sqlite3_column_type(statement, 0) != SQLITE_NULL else {
            return nil
        }
        return sqlite3_column_int64(statement, 0)
    }

    private func execute(_ sql: String) -> Int32 {
        var db: OpaquePointer?
        guard sqlite3_open(url.path, &db) == SQLITE_OK else { return SQLITE_CANTOPEN }
        defer { sqlite3_close(db) }
        return sqlite3_exec(db, sql, nil, nil, nil)
    }

    /// Sets `Z_METADATA.lastTxn` by hand in the closed store's file, then opens the store again.
    private func reopen(recordingLastTxn value: Int64) throws -> SQLiteStore {
        expectEqual(execute("UPDATE Z_METADATA SET Z_VALUE = \(value) WHERE Z_KEY = 'lastTxn'"), SQLITE_OK)
        return try SQLiteStore(url: url, model: Model.deviceReadings)
    }

    private var recordedLastTxn: Int64? {
        integer("SELECT CAST(Z_VALUE AS INTEGER) FROM Z_METADATA WHERE Z_KEY = 'lastTxn'")
    }

    private func reading(_ i: Int) -> SaveRequest {
        SaveRequest(inserts: [
            .init(
                id: tmp("Reading", "r"),
                values: [
                    "characteristic": .string("c\(i)"), "value": .binary(Data([1])),
                    "time": .date(Date(timeIntervalSince1970: Double(i))),
                ])
        ])
    }

    @Test func commitsLeaveTheMetadataNumberAloneAndReadersTakeItFromTheHistory() throws {
        defer { cleanUp() }
        let store = try SQLiteStore(url: url, model: Model.deviceReadings)
        for i in 0..<3 { try store.commit(reading(i)) }
        expectEqual(store.lastTransaction, 3)
        expectEqual(recordedLastTxn, 0)
        try expectEqual(store.fetch(FetchRequest(entity: "Reading")).txn, 3)
        try expectEqual(store.objects(with: []).txn, 3)
        store.close()
        // Closing records the number for older versions of the store, which read only that.
        expectEqual(recordedLastTxn, 3)
    }

    @Test func numbersContinueAfterAReopenWhoseMetadataNumberIsStale() throws {
        defer { cleanUp() }
        var store = try SQLiteStore(url: url, model: Model.deviceReadings)
        for i in 0..<3 { try store.commit(reading(i)) }
        store.close()
        // As after a `kill -9`: the commits are in the file, the metadata number is older.
        store = try reopen(recordingLastTxn: 1)
        defer { store.close() }
        expectEqual(store.lastTransaction, 3)
        try expectEqual(store.fetch(FetchRequest(entity: "Reading")).txn, 3)
        let result = try store.commit(reading(3))
        expectEqual(result.txn, 4)
        try expectEqual(store.history(since: 0, limit: 10).map(\.txn), [1, 2, 3, 4])
    }

    private var reservedTxn: Int64? {
        integer("SELECT CAST(Z_VALUE AS INTEGER) FROM Z_METADATA WHERE Z_KEY = 'reservedTxn'")
    }

    @Test func anOpenStoreReservesNumbersAheadAndAClosedOneWritesBackExactlyWhatItHandedOut() throws {
        defer { cleanUp() }
        var store = try SQLiteStore(url: url, model: Model.deviceReadings)
        for i in 0..<2 { try store.commit(reading(i)) }
        // Saves to disk sync their own txns: none reserved ahead, so a crash now would skip none.
        expectEqual(reservedTxn ?? 0, 0)
        // The first memory save syncs and reserves, past what was handed out: a power cut that loses a later
        // memory save cannot let its txn or its ID be handed out again (`NumberReservations`).
        var memory = reading(2)
        memory.durability = .memory
        try store.commit(memory)
        expectGreaterThan(reservedTxn ?? 0, 3 + 256)
        expectGreaterThan(integer("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENTITY = 'Reading'") ?? 0, 3 + 256)
        store.close()
        expectEqual(reservedTxn, 3)
        expectEqual(integer("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENTITY = 'Reading'"), 3)
        // A clean restart skips nothing.
        store = try SQLiteStore(url: url, model: Model.deviceReadings)
        defer { store.close() }
        let result = try store.commit(reading(3))
        expectEqual(result.txn, 4)
        expectEqual(result.ids.values.first?.number, 4)
        try expectEqual(store.history(since: 0, limit: 10).map(\.txn), [1, 2, 3, 4])
    }

    @Test func aStoreThatDidNotCloseNumbersOnPastItsReservationsWithEmptyTransactions() throws {
        defer { cleanUp() }
        var store = try SQLiteStore(url: url, model: Model.deviceReadings)
        for i in 0..<3 { try store.commit(reading(i)) }
        store.close()
        // As a store that was killed, or lost its power, leaves them: reserved past what it handed out, some of
        // which (memory saves) may be lost.
        expectEqual(execute("UPDATE Z_METADATA SET Z_VALUE = 20 WHERE Z_KEY = 'reservedTxn'"), SQLITE_OK)
        expectEqual(execute("UPDATE Z_PRIMARYKEY SET Z_MAX = 30 WHERE Z_ENTITY = 'Reading'"), SQLITE_OK)
        store = try SQLiteStore(url: url, model: Model.deviceReadings)
        defer { store.close() }
        expectEqual(store.lastTransaction, 20)
        let result = try store.commit(reading(3))
        expectEqual(result.txn, 21)
        expectEqual(result.ids.values.first?.number, 31)
        // Every txn has a history row; the ones perhaps handed out and lost are empty transactions.
        let history = try store.history(since: 0, limit: 100)
        expectEqual(history.map(\.txn), Array(1...21))
        expectEqual(history.filter { $0.inserted.isEmpty }.map(\.txn), Array(4...20))
        let check = try SQLiteConnection(path: url.path, readOnly: true, busyTimeoutMilliseconds: 1_000)
        defer { check.close() }
        try expectEqual(check.text("PRAGMA integrity_check"), "ok")
    }

    @Test func aMemorySaveOfMoreObjectsThanAreReservedSyncsAndKeepsItsNumbers() throws {
        defer { cleanUp() }
        let store = try SQLiteStore(url: url, model: Model.deviceReadings)
        defer { store.close() }
        try store.commit(reading(0))
        // 1,000 readings in one memory save: past the IDs reserved, so the group runs again with a sync, which
        // raises the reservation; the rolled-back attempt's numbers are handed out again, without a gap.
        let inserts = (1...1_000).map { i in
            SaveRequest.Insert(id: tmp("Reading", "r\(i)"), values: reading(i).inserts[0].values)
        }
        let result = try store.commit(SaveRequest(inserts: inserts, durability: .memory))
        expectEqual(result.txn, 2)
        expectEqual(Set(result.ids.values.compactMap(\.number)), Set(2...1_001))
        expectGreaterThan(integer("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENTITY = 'Reading'") ?? 0, 1_001)
    }

    @Test func pruningHistoryRecordsTheNumberSoThatAnEmptiedHistoryStillContinuesIt() throws {
        defer { cleanUp() }
        var configuration = SQLiteStore.Configuration(historyRetention: 2)
        configuration.checkpointThresholdPages = 0
        var store = try SQLiteStore(url: url, model: Model.deviceReadings, configuration: configuration)
        // Retention 2, pruned in chunks of 1: the fourth commit prunes down to the last two.
        for i in 0..<4 { try store.commit(reading(i)) }
        expectEqual(integer("SELECT MIN(Z_TXN) FROM Z_HISTORY"), 3)
        expectEqual(recordedLastTxn, 4)
        try store.commit(reading(4))
        expectEqual(recordedLastTxn, 4)
        store.close()
        expectEqual(recordedLastTxn, 5)
        // A history emptied by hand (or by an older pruning rule): the floor keeps the numbers going.
        expectEqual(execute("DELETE FROM Z_HISTORY"), SQLITE_OK)
        store = try SQLiteStore(url: url, model: Model.deviceReadings, configuration: configuration)
        defer { store.close() }
        expectEqual(store.lastTransaction, 5)
        try expectEqual(store.fetch(FetchRequest(entity: "Reading")).txn, 5)
        try expectEqual(store.commit(reading(5)).txn, 6)
    }

    @Test func aFloorAboveTheNewestHistoryRowWins() throws {
        defer { cleanUp() }
        var store = try SQLiteStore(url: url, model: Model.deviceReadings)
        for i in 0..<2 { try store.commit(reading(i)) }
        store.close()
        // A floor above the history (a file pruned, then its newest rows deleted by hand) wins.
        store = try reopen(recordingLastTxn: 7)
        defer { store.close() }
        expectEqual(store.lastTransaction, 7)
        try expectEqual(store.commit(reading(2)).txn, 8)
    }
}
