import Testing

@testable import ContextBusSQLite

extension TestStore {
    /// SQLite's `PRAGMA integrity_check` of a SQLite store's file, read through a connection of its own: `ok`, or
    /// what is wrong (an index entry that does not match its row, among others).
    func sqliteIntegrityCheck() throws -> String? {
        let sqlite = try #require(store as? SQLiteStore)
        let connection = try SQLiteConnection(path: sqlite.url.path, readOnly: true, busyTimeoutMilliseconds: 1_000)
        defer { connection.close() }
        return try connection.text("PRAGMA integrity_check")
    }
}
