import CContextBusSQLite
import ContextBusSupport
import Foundation

extension SQLiteStore {
    /// What `backup(to:pagesPerStep:shouldContinue:)` wrote.
    package struct BackupResult: Sendable, Hashable {
        /// The last transaction in the copy: every save committed before the backup began is in it.
        package var txn: Int64
        /// Pages copied, and their size.
        package var pages: Int
        package var pageSize: Int
        /// `sqlite3_backup_step` calls the copy took.
        package var steps: Int

        /// The copy's size in bytes.
        package var bytes: Int64 { Int64(pages) * Int64(pageSize) }
    }

    /// Why a backup did not finish.
    package enum BackupError: Error, Sendable, CustomStringConvertible {
        /// The destination cannot be made: its directory is missing or not writable, or it names the live database.
        case destination(path: String, reason: String)
        /// `shouldContinue` said stop; nothing is left at the destination.
        case cancelled
        /// SQLite or the file system failed during the copy; nothing is left at the destination.
        case failed(any Error)

        package var description: String {
            switch self {
            case .destination(let path, let reason): return "cannot write a backup to \(path): \(reason)"
            case .cancelled: return "the backup was cancelled"
            case .failed(let error): return "the backup failed: \(error)"
            }
        }
    }

    /// Copies the database to `path` with SQLite's online backup API while the store keeps serving.
    ///
    /// The copy runs on the calling thread, on a connection of its own (the writer and the readers are not
    /// touched): it opens one read transaction and copies `pagesPerStep` pages per `sqlite3_backup_step` until
    /// done. Holding the read transaction across the steps pins one snapshot, so the copy is consistent and never
    /// restarts however fast the writer commits (SQLite restarts a backup whose source another connection changed
    /// only when the backup's own connection sees the change, which in WAL mode it does only in a new read
    /// transaction); the writer goes on meanwhile, and the WAL cannot be checkpointed past that snapshot until the
    /// copy ends. The copy is written to a temporary file beside `path`, synced, and renamed to `path` (replacing
    /// a file there), then the directory is synced: a failed or interrupted backup never leaves a partial file
    /// under the name.
    ///
    /// - Parameters:
    ///   - path: Where the copy goes: an absolute path in an existing directory, not the database's own files.
    ///   - pagesPerStep: Pages copied per step (at least 1).
    ///   - shouldContinue: Asked between steps; `false` abandons the copy.
    /// - Returns: The copy's last transaction and size.
    /// - Throws: `BackupError`.
    package func backup(
        to path: String, pagesPerStep: Int32 = 256, shouldContinue: () -> Bool = { true }
    ) throws(BackupError) -> BackupResult {
        try Self.backup(ofDatabaseAt: url, to: path, pagesPerStep: pagesPerStep, shouldContinue: shouldContinue)
    }

    /// `backup(to:pagesPerStep:shouldContinue:)` of the database at `database`, with or without a store open on it
    /// (the migration's backup is made before the store exists, while its writer connection holds the write lock).
    static func backup(
        ofDatabaseAt database: URL, to path: String, pagesPerStep: Int32, shouldContinue: () -> Bool
    ) throws(BackupError) -> BackupResult {
        precondition(pagesPerStep >= 1, "pagesPerStep must be at least 1")
        let destination = try checkedBackupDestination(path, database: database)
        let directory = (destination as NSString).deletingLastPathComponent
        let temporary =
            directory + "/." + (destination as NSString).lastPathComponent
            + ".partial-\(ProcessInfo.processInfo.processIdentifier)"
        FileSystem.removeFile(atPath: temporary)
        var succeeded = false
        defer { if !succeeded { FileSystem.removeFile(atPath: temporary) } }
        let source: SQLiteConnection
        do {
            source = try SQLiteConnection(path: database.path, readOnly: true, busyTimeoutMilliseconds: 5000)
        } catch {
            throw .failed(error)
        }
        defer { source.close() }
        var target: OpaquePointer?
        let opened = sqlite3_open_v2(temporary, &target, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil)
        guard opened == SQLITE_OK, let target else {
            let reason = target.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close_v2(target)
            throw .destination(path: destination, reason: reason)
        }
        var result: BackupResult
        do {
            // One read transaction for the whole copy: its snapshot is the backup.
            try source.execute("BEGIN")
            let txn = try source.integer(SQLiteSchemaSetup.lastTransactionSQL) ?? 0
            result = try Self.copy(
                from: source.handle, to: target, pagesPerStep: pagesPerStep, shouldContinue: shouldContinue)
            result.txn = txn
            try source.execute("COMMIT")
            try Self.reserveExactly(txn: txn, in: target)
        } catch let error as BackupError {
            sqlite3_close_v2(target)
            throw error
        } catch {
            sqlite3_close_v2(target)
            throw .failed(error)
        }
        // The copy's last transaction committed with synchronous=FULL (the default of a rollback-journal file):
        // its pages are on disk before the close returns.
        guard sqlite3_close_v2(target) == SQLITE_OK else {
            throw .failed(SQLiteError(code: SQLITE_IOERR, message: "cannot close the copy \(temporary)"))
        }
        do {
            try Self.rename(temporary, to: destination)
        } catch {
            throw .destination(path: destination, reason: "\(error)")
        }
        succeeded = true
        Self.syncDirectory(directory)
        return result
    }

    /// Writes into the copy that it reserved transactions up to its last, `txn`, exactly: the live store reserves
    /// ahead (`NumberReservations`), and a store restored from the copy would otherwise take the numbers between
    /// for ones a crash may have handed out, and fill them with empty transactions.
    private static func reserveExactly(txn: Int64, in target: OpaquePointer) throws(BackupError) {
        let sql =
            "UPDATE \"\(SQLiteSchemaSetup.metadataTable)\" SET \"Z_VALUE\" = \(txn) "
            + "WHERE \"Z_KEY\" = '\(SQLiteWriter.reservedTxnKey)'"
        let code = sqlite3_exec(target, sql, nil, nil, nil)
        guard code == SQLITE_OK else {
            throw .failed(SQLiteError(code: code, message: String(cString: sqlite3_errmsg(target))))
        }
    }

    /// Renames the copy to its name; through the simulated disk when one is installed (power-cut tests), which
    /// records the rename so that a cut before the directory's sync can undo it.
    private static func rename(_ temporary: String, to destination: String) throws {
        guard let disk = PowerCutVFS.installedDisk else { return try FileSystem.rename(temporary, to: destination) }
        var failure: (any Error)?
        let renamed = try disk.rename(from: temporary, to: destination) {
            do {
                try FileSystem.rename(temporary, to: destination)
                return true
            } catch {
                failure = error
                return false
            }
        }
        if let failure { throw failure }
        guard renamed else { throw FileSystemError(operation: "rename to \(destination)", path: temporary, errno: EIO) }
    }

    /// `path` if a backup may be written there: absolute, in an existing directory, and not one of the files of
    /// the database itself (`store.sqlite`, `-wal`, `-shm`, `.lock`).
    private static func checkedBackupDestination(_ path: String, database: URL) throws(BackupError) -> String {
        guard path.hasPrefix("/") else { throw .destination(path: path, reason: "the path must be absolute") }
        let url = URL(fileURLWithPath: path).standardizedFileURL
        let directory = url.deletingLastPathComponent().path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw .destination(path: path, reason: "the directory \(directory) does not exist")
        }
        guard FileSystem.isWritableDirectory(directory) else {
            throw .destination(path: path, reason: "the directory \(directory) is not writable by the service")
        }
        let resolved = url.resolvingSymlinksInPath().path
        let own = database.standardizedFileURL.resolvingSymlinksInPath().path
        let ownFiles = [own, own + "-wal", own + "-shm", own + "-journal", own + ".lock"]
        guard !ownFiles.contains(resolved) else {
            throw .destination(path: path, reason: "it is the live database's own file")
        }
        return url.path
    }

    /// Runs the backup's steps until done.
    private static func copy(
        from source: OpaquePointer, to target: OpaquePointer, pagesPerStep: Int32, shouldContinue: () -> Bool
    ) throws -> BackupResult {
        guard let backup = sqlite3_backup_init(target, "main", source, "main") else {
            throw SQLiteError(code: sqlite3_errcode(target), message: String(cString: sqlite3_errmsg(target)))
        }
        var steps = 0
        var code = SQLITE_OK
        while true {
            code = sqlite3_backup_step(backup, pagesPerStep)
            steps += 1
            if code == SQLITE_DONE { break }
            if code == SQLITE_BUSY || code == SQLITE_LOCKED {
                CurrentThread.sleep(nanoseconds: 10_000_000)
            } else if code != SQLITE_OK {
                break
            }
            guard shouldContinue() else {
                sqlite3_backup_finish(backup)
                throw BackupError.cancelled
            }
        }
        let pages = Int(sqlite3_backup_pagecount(backup))
        let finished = sqlite3_backup_finish(backup)
        guard code == SQLITE_DONE, finished == SQLITE_OK else {
            let failed = code == SQLITE_DONE ? finished : code
            throw SQLiteError(code: failed, message: String(cString: sqlite3_errstr(failed)))
        }
        var pageSize: Int32 = 0
        var statement: OpaquePointer?
        if sqlite3_prepare_v2(target, "PRAGMA page_size", -1, &statement, nil) == SQLITE_OK,
            sqlite3_step(statement) == SQLITE_ROW
        {
            pageSize = sqlite3_column_int(statement, 0)
        }
        sqlite3_finalize(statement)
        return BackupResult(txn: 0, pages: pages, pageSize: Int(pageSize), steps: steps)
    }

    /// Makes a rename in `directory` durable (best effort: a directory that cannot be opened is left as it is).
    private static func syncDirectory(_ directory: String) {
        FileSystem.syncDirectory(directory)
        // Power-cut tests: the simulated disk makes the directory's changes durable only now.
        try? PowerCutVFS.installedDisk?.syncDirectory(directory)
    }
}
