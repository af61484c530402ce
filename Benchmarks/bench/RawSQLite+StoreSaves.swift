import CContextBusSQLite
import ContextBusObjectGraph
import ContextBusSQLite
import Foundation

/// SQLite alone doing what storesvc's durable one-object saves write: the floor under their rate.
extension RawSQLite {
    /// A new file with the store's own schema for `model` (tables, indexes, counters; made by `SQLiteStore`, then
    /// closed), opened raw.
    static func withStoreSchema(path: String, model: Model, pageSize: Int?) throws -> RawSQLite {
        let store = try SQLiteStore(
            url: URL(fileURLWithPath: path), model: model, configuration: .init(pageSize: pageSize))
        store.close()
        return try RawSQLite(path: path, schema: "")
    }

    /// Transactions of `savesPerCommit` saves in one thread, each writing what a `Device` insert of storesvc's
    /// durable-save benchmark writes: its `Device` row (an address `client:n` of one of `clients` clients, as the
    /// benchmark's clients number theirs, so that the address index takes the same leaves) and its `Z_HISTORY` row
    /// with `historyJSON` and its own transaction number; then the `Device` counter once per commit, and `COMMIT`
    /// with its fsync. No sockets, no JSON parsing, no planning, no answers, no other thread. Call on a file made
    /// by `withStoreSchema`; rates are saves.
    func deviceSaveRate(
        savesPerCommit: Int, clients: Int, historyJSON: String, duration: Duration
    ) throws -> (saves: Double, savesPerCPUSecond: Double) {
        let device = try prepare(
            #"INSERT INTO "Device" ("Z_PK", "Z_VERSION", "address", "name") VALUES (?, 1, ?, 'bench device')"#)
        let history = try prepare(
            #"INSERT INTO "Z_HISTORY" ("Z_TXN", "Z_TIME", "Z_AUTHOR", "Z_CHANGES") VALUES (?, ?, NULL, ?)"#)
        let counter = try prepare(#"UPDATE "Z_PRIMARYKEY" SET "Z_MAX" = ? WHERE "Z_ENTITY" = 'Device'"#)
        defer { [device, history, counter].forEach { sqlite3_finalize($0) } }
        func run(_ statement: OpaquePointer) throws {
            guard sqlite3_step(statement) == SQLITE_DONE else {
                throw SQLiteError(code: sqlite3_errcode(db), message: String(cString: sqlite3_errmsg(db)))
            }
            sqlite3_reset(statement)
        }
        var number: Int64 = 0
        var failure: (any Error)?
        let timed = try repeatTransactions(for: duration) {
            do {
                for _ in 0..<savesPerCommit {
                    number += 1
                    let client = Int(number) % clients
                    sqlite3_bind_int64(device, 1, number)
                    sqlite3_bind_text(device, 2, "\(40_000 + client):\(Int(number) / clients)", -1, csqlite_transient())
                    try run(device)
                    sqlite3_bind_int64(history, 1, number)
                    sqlite3_bind_double(history, 2, Date().timeIntervalSinceReferenceDate)
                    sqlite3_bind_text(history, 3, historyJSON, -1, csqlite_transient())
                    try run(history)
                }
                sqlite3_bind_int64(counter, 1, number)
                try run(counter)
            } catch {
                failure = failure ?? error
            }
        }
        if let failure { throw failure }
        let saves = Double(timed.transactions * savesPerCommit)
        return (saves / timed.seconds, saves / timed.cpuSeconds)
    }

    /// The change set the store wrote last in its history, as the JSON text it stored: what a raw
    /// writer doing a save's work must write too.
    static func lastHistoryJSON(ofStoreAt path: String) throws -> String {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK, let db else {
            throw SQLiteError(code: 1, message: "open \(path)")
        }
        defer { sqlite3_close_v2(db) }
        var statement: OpaquePointer?
        let sql = "SELECT Z_CHANGES FROM Z_HISTORY ORDER BY Z_TXN DESC LIMIT 1"
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw SQLiteError(code: sqlite3_errcode(db), message: String(cString: sqlite3_errmsg(db)), sql: sql)
        }
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW, let text = sqlite3_column_text(statement, 0) else {
            throw SQLiteError(code: 0, message: "the store wrote no history", sql: sql)
        }
        return String(cString: text)
    }

}
