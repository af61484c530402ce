import CContextBusSQLite
import Foundation

/// A prepared statement: bind parameters (1-based), step through rows, read columns (0-based).
///
/// Used only by the thread that uses its connection.
final class SQLiteStatement {
    let handle: OpaquePointer
    unowned let connection: SQLiteConnection
    let sql: String

    init(handle: OpaquePointer, connection: SQLiteConnection, sql: String) {
        self.handle = handle
        self.connection = connection
        self.sql = sql
    }

    deinit { sqlite3_finalize(handle) }

    /// Resets the statement to run again and clears its bindings.
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Steps once: `true` when a row is available, `false` when the statement is done.
    func step() throws(SQLiteError) -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = connection.error(code: code, sql: sql)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Steps until done (for statements that return no rows), then resets.
    func run() throws(SQLiteError) {
        while try step() {}
        sqlite3_reset(handle)
    }

    // MARK: - Binding

    private func check(_ code: Int32) throws(SQLiteError) {
        guard code == SQLITE_OK else { throw connection.error(code: code, sql: sql) }
    }

    func bindNull(at index: Int32) throws(SQLiteError) { try check(sqlite3_bind_null(handle, index)) }

    func bind(_ value: Int64, at index: Int32) throws(SQLiteError) {
        try check(sqlite3_bind_int64(handle, index, value))
    }

    func bind(_ value: Double, at index: Int32) throws(SQLiteError) {
        try check(sqlite3_bind_double(handle, index, value))
    }

    func bind(_ value: String, at index: Int32) throws(SQLiteError) {
        var value = value
        let code = value.withUTF8 { bytes in
            sqlite3_bind_text(
                handle, index,
                UnsafeRawPointer(bytes.baseAddress ?? UnsafePointer(bitPattern: 1)!)
                    .assumingMemoryBound(to: CChar.self), Int32(bytes.count), csqlite_transient())
        }
        try check(code)
    }

    /// Binds UTF-8 `bytes` as text.
    func bind(utf8 bytes: [UInt8], at index: Int32) throws(SQLiteError) {
        let code = bytes.withUnsafeBufferPointer { buffer in
            sqlite3_bind_text(
                handle, index,
                UnsafeRawPointer(buffer.baseAddress ?? UnsafePointer(bitPattern: 1)!)
                    .assumingMemoryBound(to: CChar.self), Int32(buffer.count), csqlite_transient())
        }
        try check(code)
    }

    func bind(_ value: Data, at index: Int32) throws(SQLiteError) {
        guard !value.isEmpty else {
            try check(sqlite3_bind_zeroblob(handle, index, 0))
            return
        }
        let code = value.withUnsafeBytes { bytes in
            sqlite3_bind_blob(handle, index, bytes.baseAddress, Int32(bytes.count), csqlite_transient())
        }
        try check(code)
    }

    // MARK: - Columns

    func isNull(at column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    func int64(at column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    func double(at column: Int32) -> Double { sqlite3_column_double(handle, column) }

    func text(at column: Int32) -> String {
        guard let bytes = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    func data(at column: Int32) -> Data {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let bytes = sqlite3_column_blob(handle, column) else { return Data() }
        return Data(bytes: bytes, count: count)
    }
}

@available(*, unavailable)
extension SQLiteStatement: Sendable {}
