import ContextBusObjectGraph
import ContextBusSupport

/// Read connections of a SQLite store, so that reads never wait for the writer (WAL readers see
/// the last committed state while the writer works).
///
/// A reader checks a connection out, runs one read transaction on it, and puts it back; up to
/// `capacity` idle connections are kept, more are opened under load and closed after use.
final class SQLiteReaderPool: Sendable {
    private struct State {
        var idle: [SQLiteConnection] = []
        var isClosed = false
    }

    private let state = Locked(State())
    private let path: String
    private let capacity: Int
    private let busyTimeoutMilliseconds: Int32

    init(path: String, capacity: Int, busyTimeoutMilliseconds: Int32) {
        self.path = path
        self.capacity = capacity
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
    }

    /// Runs `body` in a read transaction; `txn` is the last transaction the snapshot reflects.
    func read<T>(_ body: (_ connection: SQLiteConnection, _ txn: Int64) throws -> T) throws -> T {
        let connection = try checkOut()
        defer { checkIn(connection) }
        try connection.statement("BEGIN DEFERRED").run()
        do {
            let txn = try connection.integer(SQLiteSchemaSetup.lastTransactionSQL) ?? 0
            let result = try body(connection, txn)
            try connection.statement("COMMIT").run()
            return result
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    private func checkOut() throws -> SQLiteConnection {
        let reused = try state.withLock { state throws(StoreError) -> SQLiteConnection? in
            guard !state.isClosed else { throw .unavailable("the store is closed") }
            return state.idle.popLast()
        }
        if let reused { return reused }
        let connection = try SQLiteConnection(
            path: path, readOnly: false, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        try connection.execute("PRAGMA query_only=1")
        return connection
    }

    private func checkIn(_ connection: SQLiteConnection) {
        let keep = state.withLock { state in
            guard !state.isClosed, state.idle.count < capacity else { return false }
            state.idle.append(connection)
            return true
        }
        if !keep { connection.close() }
    }

    /// Closes the idle connections; connections in use close when they are checked in.
    func close() {
        let idle = state.withLock { state in
            state.isClosed = true
            defer { state.idle = [] }
            return state.idle
        }
        for connection in idle { connection.close() }
    }
}
