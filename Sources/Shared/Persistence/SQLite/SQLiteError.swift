/// An error reported by SQLite: its result code, its message, and the statement that failed.
public struct SQLiteError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The (extended) result code, such as `SQLITE_BUSY` (5) or `SQLITE_CONSTRAINT` (19).
    public let code: Int32
    public let message: String
    /// The SQL being run, when there was one.
    public let sql: String?

    public init(code: Int32, message: String, sql: String? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
    }

    /// "SQLite error 19: UNIQUE constraint failed: Book.Z_PK - while executing `INSERT …`"
    public var description: String {
        var text = "SQLite error \(code): \(message)"
        if let sql { text += " - while executing `\(sql.replacingOccurrences(of: "\n", with: " "))`" }
        return text
    }
}
