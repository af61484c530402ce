import ContextBusClient
import ContextBusObjectGraph
import ContextBusSQLite
import ContextBusSupport
import ContextBusWire
import Foundation
@preconcurrency import Glibc
import Synchronization
import TestSupport
import Testing

/// `store.backup` on a real `storesvc`: a backup taken while clients save about 1,000 times a second holds every
/// save acknowledged before it began and passes `PRAGMA integrity_check`; a restored backup serves and goes on
/// numbering transactions from the backup's; bad paths get `-32602` and the service serves on.
@Suite struct StoreServiceBackupTests {
    /// The saves clients had acknowledged: (txn, the inserted ID).
    final class Acknowledged: Sendable {
        private let saves = Locked<[(txn: Int64, id: String)]>([])
        func add(txn: Int64, id: String) { saves.withLock { $0.append((txn, id)) } }
        var all: [(txn: Int64, id: String)] { saves.withLock { $0 } }
    }

    /// Set to stop the load.
    final class StopFlag: Sendable {
        private let value = Atomic(false)
        func set() { value.store(true, ordering: .relaxed) }
        var isSet: Bool { value.load(ordering: .relaxed) }
    }

    /// Fills the store with about 6 MB (a dozen saves of 256 readings with 2 KB values), so that a backup takes
    /// many steps of 256 pages while the load goes on.
    static func fill(_ client: BusClient) async throws {
        let value = Data(repeating: 0x5A, count: 2048).base64EncodedString()
        for batch in 0..<12 {
            let readings = (0..<256).map { index in
                #"{"entity":"Reading","values":{"characteristic":"2a19","value":"\#(value)","time":"2026-01-01T00:00:00.000Z","chain":"fill-\#(batch)-\#(index)"}}"#
            }
            let params = #"{"insert":[\#(readings.joined(separator: ","))],"durability":"memory"}"#
            _ = try await client.call(method: "store.save", params: json(params))
        }
    }

    /// Clients saving about `perSecond` one-object saves a second in all until `stop` is set.
    static func load(
        _ service: StoreServiceProcess, clients: Int, perSecond: Int, acknowledged: Acknowledged, stop: StopFlag
    ) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in 0..<clients {
                group.addTask {
                    let client = try await service.client("load-\(lane)")
                    defer { client.close() }
                    let interval = Duration.seconds(Double(clients) / Double(perSecond))
                    var next = ContinuousClock.now
                    var index = 0
                    while !stop.isSet {
                        let params = json(
                            #"{"insert":[{"entity":"Device","values":{"address":"load-\#(lane)-\#(index)"}}],"durability":"memory"}"#
                        )
                        let result = try await client.call(method: "store.save", params: params)
                        if let txn = result["txn"]?.intValue, let id = result["ids"]?["insert[0]"]?.stringValue {
                            acknowledged.add(txn: txn, id: id)
                        }
                        index += 1
                        next += interval
                        if next > .now { try await Task.sleep(until: next) }
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    /// Polls `condition` every 10 ms for up to a minute (a guard against a hang, not a timing check).
    static func waitUntil(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while !condition() {
            guard ContinuousClock.now < deadline else { throw CancellationError() }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// `PRAGMA integrity_check` of `path` with the sqlite3 shell.
    static func integrityCheck(_ path: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = [path, "PRAGMA integrity_check"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3"), "needs the sqlite3 shell"))
    func backupUnderLoadHasEveryAcknowledgedSaveAndPassesTheIntegrityCheck() async throws {
        let directory = try makeTemporaryDirectory()
        let service = try StoreServiceProcess(directory: directory)
        defer { service.destroy() }
        let client = try await service.client()
        defer { client.close() }
        try await Self.fill(client)
        let acknowledged = Acknowledged()
        let stop = StopFlag()
        let load = Task {
            try await Self.load(service, clients: 8, perSecond: 1000, acknowledged: acknowledged, stop: stop)
        }
        // The backup starts once the load is under way (a readiness wait, not a timing check: the clients connect
        // slowly on a busy machine), and the load goes on until saves are acknowledged after the backup's answer,
        // so that it ran throughout the copy.
        try await Self.waitUntil { acknowledged.all.count >= 200 }
        let before = acknowledged.all
        let path = directory.appendingPathComponent("backup.sqlite").path
        let backup = try await client.call(StoreBackup.self, BackupParams(path: path))
        let answered = acknowledged.all.count
        try await Self.waitUntil { acknowledged.all.count >= answered + 50 }
        stop.set()
        try await load.value
        expectGreaterThanOrEqual(backup.txn, before.map(\.txn).max() ?? 0)
        expectGreaterThan(backup.pages, 1000, "a small backup proves little")
        expectEqual(backup.path, path)
        expectEqual(try Self.integrityCheck(path), "ok")
        // Every save acknowledged before the backup began is in it.
        let copy = try SQLiteStore(url: URL(fileURLWithPath: path), model: .deviceReadings)
        defer { copy.close() }
        let ids = before.compactMap { ObjectID(string: $0.id) }
        expectEqual(ids.count, before.count)
        expectEmpty(try copy.objects(with: ids).missing)
        expectEqual(copy.lastTransaction, backup.txn)
        _ = try await client.call(BusPing.self)
    }

    @Test func aRestoredBackupServesAndNumbersTransactionsOnFromTheBackups() async throws {
        let directory = try makeTemporaryDirectory()
        let service = try StoreServiceProcess(directory: directory)
        defer { service.destroy() }
        let client = try await service.client()
        for index in 0..<5 {
            _ = try await client.call(
                method: "store.save",
                params: json(#"{"insert":[{"entity":"Device","values":{"address":"d-\#(index)"}}]}"#))
        }
        let path = directory.appendingPathComponent("backup.sqlite").path
        let backup = try await client.call(StoreBackup.self, BackupParams(path: path))
        expectEqual(backup.txn, 5)
        // Saves after the backup are not in it.
        _ = try await client.call(
            method: "store.save", params: json(#"{"insert":[{"entity":"Device","values":{"address":"later"}}]}"#))
        client.close()
        service.signal(SIGTERM)
        expectEqual(service.waitForExit(), 0)

        // Restore: the backup as the database of a new service (docs/operations.md, "Restore").
        let restoredDirectory = try makeTemporaryDirectory()
        try FileManager.default.copyItem(
            atPath: path, toPath: restoredDirectory.appendingPathComponent("store.sqlite").path)
        let restored = try StoreServiceProcess(directory: restoredDirectory)
        defer { restored.destroy() }
        let restoredClient = try await restored.client()
        defer { restoredClient.close() }
        let count = try await restoredClient.call(
            method: "store.fetch", params: json(#"{"entity":"Device","result":"count"}"#))
        expectEqual(count["count"], .int(5))
        let next = try await restoredClient.call(
            method: "store.save", params: json(#"{"insert":[{"entity":"Device","values":{"address":"after"}}]}"#))
        expectEqual(next["txn"], .int(backup.txn + 1))
        expectEqual(try await restoredClient.call(StoreStats.self).other["lastTxn"], .int(backup.txn + 1))
    }

    @Test func badBackupPathsAreRefusedAndTheServiceServesOn() async throws {
        let directory = try makeTemporaryDirectory()
        let service = try StoreServiceProcess(directory: directory)
        defer { service.destroy() }
        let client = try await service.client()
        defer { client.close() }
        let cases: [(path: String, message: String)] = [
            ("relative.sqlite", "must be an absolute path"),
            (directory.path + "/missing/backup.sqlite", "does not exist"),
            (service.databasePath, "the live database's own file"),
            (service.databasePath + "-wal", "the live database's own file"),
        ]
        for (path, message) in cases {
            do {
                _ = try await client.call(StoreBackup.self, BackupParams(path: path))
                Issue.record("\(path) was accepted")
            } catch let error as RPCError {
                expectEqual(error.code, .invalidParams, "\(path)")
                expectEqual(error.field, "path", "\(path)")
                expectTrue(error.message.contains(message), "\(path): \(error.message)")
            }
        }
        expectFalse(FileManager.default.fileExists(atPath: directory.path + "/missing"))
        _ = try await client.call(BusPing.self)
    }
}
