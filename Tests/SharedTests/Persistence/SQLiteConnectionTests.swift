import CContextBusSQLite
import Foundation
import TestSupport
import Testing

@testable import ContextBusSQLite

/// `SQLiteConnection`'s single-value queries leave no statement running (a running statement holds a read
/// transaction open, and an open read transaction pins the WAL: issue #8's growing `-wal`/`-shm`).
struct SQLiteConnectionTests {
    /// A connection to a new database with one empty table `t(x)`.
    func makeConnection(in directory: URL) throws -> SQLiteConnection {
        let connection = try SQLiteConnection(
            path: directory.appendingPathComponent("c.sqlite").path, readOnly: false, busyTimeoutMilliseconds: 1_000)
        try connection.execute("CREATE TABLE t (x INTEGER, y TEXT)")
        return connection
    }

    @Test func anIntegerQueryAnsweringNullLeavesNoStatementRunning() throws {
        let directory = try TestStore.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let connection = try makeConnection(in: directory)
        defer { connection.close() }
        expectNil(try connection.integer("SELECT MIN(x) FROM t"))
        expectEqual(connection.runningStatementCount, 0)
        try connection.execute("INSERT INTO t VALUES (7, 'seven')")
        try expectEqual(connection.integer("SELECT MIN(x) FROM t"), 7)
        expectEqual(connection.runningStatementCount, 0)
    }

    @Test func aTextQueryAnsweringNullOrNoRowLeavesNoStatementRunning() throws {
        let directory = try TestStore.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let connection = try makeConnection(in: directory)
        defer { connection.close() }
        expectNil(try connection.text("SELECT MAX(y) FROM t"))
        expectEqual(connection.runningStatementCount, 0)
        expectNil(try connection.text("SELECT y FROM t WHERE x = ?", [.int(1)]))
        expectEqual(connection.runningStatementCount, 0)
    }

    @Test func theCountSeesAStatementLeftOnARow() throws {
        let directory = try TestStore.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let connection = try makeConnection(in: directory)
        defer { connection.close() }
        let statement = try connection.statement("SELECT MIN(x) FROM t")
        expectTrue(try statement.step())
        expectEqual(connection.runningStatementCount, 1)
        statement.reset()
        expectEqual(connection.runningStatementCount, 0)
    }
}
