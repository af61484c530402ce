import CContextBusSQLite
import ContextBusObjectGraph

/// One SQLite database connection with a cache of prepared statements.
///
/// Not thread-safe by itself: a connection is used by one thread at a time. The writer
/// connection is used only on the writer's serial queue; a read connection is checked out of
/// `SQLiteReaderPool` by one reader at a time.
final class SQLiteConnection: @unchecked Sendable {
    // @unchecked Sendable: ownership moves between threads (pool check-out, writer queue), but
    // at any moment exactly one thread uses the connection, as described above.
    let handle: OpaquePointer
    private var statements: [String: SQLiteStatement] = [:]
    private var recent: [SQLiteStatement] = []
    private var nextRecent = 0
    private(set) var isClosed = false

    /// Opens (creating it unless `readOnly`) the database at `path`, through the VFS named `vfs` (SQLite's
    /// default when `nil`).
    init(path: String, readOnly: Bool, busyTimeoutMilliseconds: Int32, vfs: String? = nil) throws {
        var db: OpaquePointer?
        let flags =
            (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_NOMUTEX
        let code = sqlite3_open_v2(path, &db, flags, vfs)
        guard code == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close_v2(db)
            throw SQLiteError(code: code, message: "\(message) (\(path))")
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, busyTimeoutMilliseconds)
        try StorePredicates.registerFunctions(on: db)
    }

    deinit { close() }

    /// Finalises every statement and closes the connection; safe to call twice.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        recent.removeAll()
        statements.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Runs one or more statements that take no parameters and return no rows of interest.
    func execute(_ sql: String) throws(SQLiteError) {
        let code = sqlite3_exec(handle, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw error(code: code, sql: sql) }
    }

    /// The prepared statement for `sql`, from the cache, reset and with no bindings.
    func statement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        // The statements used last, found by comparing texts: the hot callers pass the same strings each time (an
        // entity table's SQL, the writer's literals), and two strings that share their storage compare equal at
        // once, where hashing a hundred bytes of SQL for the dictionary costs about a thousand instructions.
        for index in recent.indices where recent[index].sql == sql {
            let cached = recent[index]
            cached.reset()
            return cached
        }
        let statement: SQLiteStatement
        if let cached = statements[sql] {
            cached.reset()
            statement = cached
        } else {
            var prepared: OpaquePointer?
            let code = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &prepared, nil)
            guard code == SQLITE_OK, let prepared else { throw error(code: code, sql: sql) }
            statement = SQLiteStatement(handle: prepared, connection: self, sql: sql)
            statements[sql] = statement
        }
        if recent.count < Self.recentStatements {
            recent.append(statement)
        } else {
            recent[nextRecent] = statement
            nextRecent = (nextRecent + 1) % Self.recentStatements
        }
        return statement
    }

    /// How many statements `statement(_:)` finds without hashing their text.
    static let recentStatements = 8

    /// A prepared statement that is not cached (for SQL built per request).
    func uncachedStatement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        var prepared: OpaquePointer?
        let code = sqlite3_prepare_v2(handle, sql, -1, &prepared, nil)
        guard code == SQLITE_OK, let prepared else { throw error(code: code, sql: sql) }
        return SQLiteStatement(handle: prepared, connection: self, sql: sql)
    }

    /// The error for a failed call, with SQLite's current message.
    func error(code: Int32, sql: String?) -> SQLiteError {
        SQLiteError(code: code, message: String(cString: sqlite3_errmsg(handle)), sql: sql)
    }

    /// The single integer the query returns (`nil` for no row or NULL).
    ///
    /// The statement is reset on every path: one left on a row (a NULL `MIN(…)` of an empty table) would keep
    /// its read transaction open, and an open read transaction pins the WAL: no checkpoint could copy past it,
    /// and the `-wal` and `-shm` files would grow for as long as the connection lives.
    func integer(_ sql: String, _ bindings: [PropertyValue] = []) throws(SQLiteError) -> Int64? {
        let statement = try statement(sql)
        defer { statement.reset() }
        for (i, value) in bindings.enumerated() { try statement.bind(value, at: Int32(i + 1)) }
        guard try statement.step(), !statement.isNull(at: 0) else { return nil }
        return statement.int64(at: 0)
    }

    /// The single text value the query returns (`nil` for no row or NULL); resets the statement on every path.
    func text(_ sql: String, _ bindings: [PropertyValue] = []) throws(SQLiteError) -> String? {
        let statement = try statement(sql)
        defer { statement.reset() }
        for (i, value) in bindings.enumerated() { try statement.bind(value, at: Int32(i + 1)) }
        guard try statement.step(), !statement.isNull(at: 0) else { return nil }
        return statement.text(at: 0)
    }

    /// How many of the connection's statements are running (stepped, not yet reset or done): each holds the
    /// connection's read transaction open. Zero between calls.
    var runningStatementCount: Int {
        var count = 0
        var next = sqlite3_next_stmt(handle, nil)
        while let statement = next {
            if sqlite3_stmt_busy(statement) != 0 { count += 1 }
            next = sqlite3_next_stmt(handle, statement)
        }
        return count
    }

    /// The pages this connection has written to the WAL since the last call (or since it opened), one frame
    /// each: `SQLITE_DBSTATUS_CACHE_WRITE`, read and reset, so that SQLite's 32-bit counter never wraps.
    /// Checkpoints, rollbacks and recovery write no frames and are not counted.
    func takePagesWrittenToTheWAL() -> Int {
        var current: Int32 = 0
        var highest: Int32 = 0
        let reset: Int32 = 1
        guard sqlite3_db_status(handle, SQLITE_DBSTATUS_CACHE_WRITE, &current, &highest, reset) == SQLITE_OK else {
            return 0
        }
        return Int(current)
    }

    /// Turns the gathering of WAL writes on or off (off writes what is gathered); nothing for a connection not
    /// opened through `WALWriteGathering.vfsName`.
    func gatherWALWrites(_ on: Bool) throws(SQLiteError) {
        var argument: Int32 = on ? 1 : 0
        let code = sqlite3_file_control(handle, "main", WALWriteGathering.setGatheringOpcode, &argument)
        guard code == SQLITE_OK || code == SQLITE_NOTFOUND else { throw error(code: code, sql: nil) }
    }

    /// The writes made to the WAL file since the last call; 0 for a connection that does not gather them.
    func takeWALWrites() -> Int {
        var writes: Int64 = 0
        let code = sqlite3_file_control(handle, "main", WALWriteGathering.writesOpcode, &writes)
        return code == SQLITE_OK ? Int(writes) : 0
    }

    /// Makes the next gathered write to the WAL fail with `SQLITE_IOERR_WRITE`, as a failing disk would (tests).
    func failNextWALWrite() {
        let code = sqlite3_file_control(handle, "main", WALWriteGathering.failNextRunOpcode, nil)
        precondition(code == SQLITE_OK, "the connection does not gather WAL writes")
    }

    /// Runs a statement with `bindings` to completion.
    func run(_ sql: String, _ bindings: [PropertyValue] = []) throws(SQLiteError) {
        let statement = try statement(sql)
        for (i, value) in bindings.enumerated() { try statement.bind(value, at: Int32(i + 1)) }
        try statement.run()
    }
}
