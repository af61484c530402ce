import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

@testable import ContextBusSQLite
@testable import ContextBusSupport

/// The store's durable position (docs/persistence.md, "The durable position"), which `store.replicaChanges` feeds
/// the fleet from: only transactions a sync made durable are given, a memory one follows once the sync the call
/// asked for has run, and on the durable path nothing more is synced. A real storesvc over its socket.
struct StoreServiceDurablePositionTests {
    /// `store.replicaChanges` since `since`: the txns given, the answer's `durable` and `lastTxn`.
    static func changes(
        _ connection: RawBusConnection, since: Int64
    ) throws -> (
        txns: [Int64], durable: Int64, lastTxn: Int64
    ) {
        let answer = try connection.call(9, "store.replicaChanges", #"{"since":\#(since)}"#)
        guard let result = answer["result"], let durable = result["durable"]?.intValue,
            let lastTxn = result["lastTxn"]?.intValue
        else { throw RawBusConnectionError.refused(answer) }
        return ((result["transactions"]?.arrayValue ?? []).compactMap { $0["txn"]?.intValue }, durable, lastTxn)
    }

    static func statistic(_ connection: RawBusConnection, _ key: String) throws -> Int64? {
        try connection.call(8, "store.stats")["result"]?[key]?.intValue
    }

    @Test func replicaChangesGivesDurableTransactionsOnlyAndAMemoryOneAfterTheSyncItAskedFor() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await onOwnThread {
            let service = try StoreServiceProcess(directory: directory)
            defer { service.destroy() }
            let connection = try RawBusConnection(path: service.socketPath)
            try connection.hello()
            _ = try connection.call(1, "store.replica", #"{"gateway":"a"}"#)

            // The durable path: each disk save is given at once, and no sync is added for it.
            for i in 1...20 {
                let saved = try connection.call(
                    2, "store.save", PowerCutLoad.insert(address: "d\(i)", durability: "disk"))
                let txn = try #require(saved["result"]?["txn"]?.intValue)
                let page = try Self.changes(connection, since: txn - 1)
                expectEqual(page.txns, [txn])
                expectEqual(page.durable, txn)
                expectEqual(page.lastTxn, txn)
            }
            expectEqual(try Self.statistic(connection, "durabilitySyncs"), 0, "a sync added on the durable path")

            // The first memory save syncs (it reserves the numbers the next ones hand out without a sync); the next
            // is held back until the sync the call asks for has run, then given.
            _ = try connection.call(3, "store.save", PowerCutLoad.insert(address: "m0", durability: "memory"))
            let saved = try connection.call(4, "store.save", PowerCutLoad.insert(address: "m1", durability: "memory"))
            let memoryTxn = try #require(saved["result"]?["txn"]?.intValue)
            let first = try Self.changes(connection, since: memoryTxn - 1)
            expectEqual(first.txns, [], "a transaction committed without a sync was given")
            expectEqual(first.durable, memoryTxn - 1)
            expectEqual(first.lastTxn, memoryTxn)
            let deadline = ContinuousClock.now + .seconds(30)  // a guard, not a timing check
            var page = first
            while page.txns.isEmpty, ContinuousClock.now < deadline {
                usleep(5_000)
                page = try Self.changes(connection, since: memoryTxn - 1)
            }
            expectEqual(page.txns, [memoryTxn])
            expectEqual(page.durable, memoryTxn)
            expectEqual(try Self.statistic(connection, "durableTxn"), memoryTxn)
            expectEqual(try Self.statistic(connection, "durabilitySyncs"), 1)

            // A stream of memory saves read as it goes: the syncs asked for are at most one per 50 ms, far fewer
            // than the saves, and what is given is always at most `durable`.
            let started = ContinuousClock.now
            var given = memoryTxn
            for i in 2...201 {
                _ = try connection.call(5, "store.save", PowerCutLoad.insert(address: "m\(i)", durability: "memory"))
                let page = try Self.changes(connection, since: given)
                expectTrue(page.txns.allSatisfy { $0 <= page.durable }, "given past \(page.durable): \(page.txns)")
                given = page.txns.last ?? given
            }
            let elapsed = ContinuousClock.now - started
            let syncs = try #require(try Self.statistic(connection, "durabilitySyncs")) - 1
            expectLessThanOrEqual(
                syncs, Int64(elapsed / .milliseconds(50)) + 1, "more than one asked-for sync per 50 ms in \(elapsed)")
            expectLessThan(syncs, 200)
        }
    }

    /// What `store.replicaChanges` gave is what the fleet publishes: a power cut must not take any of it. Memory
    /// saves, each read back at once, then `kill -9` and a cut of everything unsynced: every transaction given is
    /// still there, inserting the same object. (Before the store gave only durable transactions, the last memory saves
    /// given were lost.)
    @Test func whatReplicaChangesGaveSurvivesAPowerCut() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let disk = directory.appendingPathComponent("disk").path
        let arguments = ["--test-power-cut", disk, "--test-checkpoint-pages", "0"]
        let lost = try await onOwnThread { () throws -> [String] in
            var service = try StoreServiceProcess(directory: directory, arguments: arguments)
            var connection = try RawBusConnection(path: service.socketPath)
            try connection.hello()
            _ = try connection.call(1, "store.replica", #"{"gateway":"a"}"#)
            var given: [Int64: String] = [:]
            var since: Int64 = 0
            var acknowledged = 0
            for i in 1...60 {
                let saved = try connection.call(
                    2, "store.save", PowerCutLoad.insert(address: "m\(i)", durability: "memory"))
                if saved["result"]?["txn"]?.intValue != nil { acknowledged += 1 }
                let answer = try connection.call(3, "store.replicaChanges", #"{"since":\#(since)}"#)
                for transaction in answer["result"]?["transactions"]?.arrayValue ?? [] {
                    guard let txn = transaction["txn"]?.intValue else { continue }
                    given[txn] = transaction["inserted"]?.arrayValue?.first?["id"]?.stringValue ?? "-"
                    since = txn
                }
            }
            expectEqual(acknowledged, 60)
            // Once all is durable and no asked-for sync is due, three more memory saves that nobody reads: these
            // the cut takes (they were never given).
            let deadline = ContinuousClock.now + .seconds(30)  // a guard, not a timing check
            while try Self.changes(connection, since: since).durable < (try Self.statistic(connection, "lastTxn") ?? 0),
                ContinuousClock.now < deadline
            {
                usleep(5_000)
            }
            usleep(100_000)
            for i in 61...63 {
                _ = try connection.call(5, "store.save", PowerCutLoad.insert(address: "m\(i)", durability: "memory"))
            }
            service.signal(SIGKILL)
            _ = service.waitForExit()
            var random = SeededGenerator(seed: 28)
            let outcome = try PowerCut.apply(to: disk, losing: .everything, using: &random)
            expectGreaterThan(outcome.writesLost, 0, "nothing unsynced was lost: the check shows nothing")

            service = try StoreServiceProcess(directory: directory, arguments: arguments)
            defer { service.destroy() }
            connection = try RawBusConnection(path: service.socketPath)
            try connection.hello()
            var survived: [Int64: String] = [:]
            var after: Int64 = 0
            while true {
                let page = try connection.call(4, "store.history", #"{"since":\#(after)}"#)
                let transactions = page["result"]?["transactions"]?.arrayValue ?? []
                guard let last = transactions.last?["txn"]?.intValue else { break }
                for transaction in transactions {
                    guard let txn = transaction["txn"]?.intValue else { continue }
                    // `store.history` names the inserted objects by ID.
                    survived[txn] = transaction["inserted"]?.arrayValue?.first?.stringValue ?? "-"
                }
                after = last
            }
            expectFalse(given.isEmpty)
            return given.sorted { $0.key < $1.key }.filter { survived[$0.key] != $0.value }.map {
                "txn \($0.key) (\($0.value)) was given to the fleet and a power cut took it: \(survived[$0.key] ?? "gone")"
            }
        }
        expectEqual(lost, [])
    }
}
