import CContextBusSQLite
import Foundation
import TestSupport
import Testing

@testable import ContextBusSQLite

/// The SQLite store's WAL is checkpointed as it goes: nothing holds a read transaction open between calls, so
/// the `-wal` file is copied back into the database instead of growing with every commit (issue #8).
struct SQLiteStoreCheckpointTests {
    /// `PRAGMA wal_checkpoint(PASSIVE)` from a connection of its own: (frames in the WAL, frames copied back).
    func checkpoint(_ url: URL) throws -> (log: Int64, checkpointed: Int64) {
        let connection = try SQLiteConnection(path: url.path, readOnly: false, busyTimeoutMilliseconds: 5_000)
        defer { connection.close() }
        let statement = try connection.statement("PRAGMA wal_checkpoint(PASSIVE)")
        defer { statement.reset() }
        guard try statement.step() else { return (-1, -1) }
        return (statement.int64(at: 1), statement.int64(at: 2))
    }

    @Test func aNewDatabaseIsCheckpointedAfterSavesAndReads() throws {
        let directory = try TestStore.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("store.sqlite")
        // A new database: its history is empty when the writer opens (the case that pinned the WAL).
        let store = try SQLiteStore(url: url, model: .deviceReadings)
        defer { store.close() }
        for n in 0..<50 {
            let id = try store.insert("Device", ["address": .string("AA:\(n)")])
            _ = try store.objects(with: [id])
            _ = try store.history(since: 0, limit: 5)
        }
        let result = try checkpoint(url)
        expectGreaterThan(result.log, 0)
        expectEqual(result.checkpointed, result.log)
    }
}
