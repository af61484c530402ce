import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

@testable import ContextBusSupport

/// `kill -9` of a real `storesvc` at random moments of a mixed load, round after round on one database: after
/// every restart, nothing a client was told is lost or half applied, txns never go back, and a subscriber that
/// resumes with `since` gets every transaction after it exactly once.
///
/// `CTXBUS_CRASH_ROUNDS` sets the number of rounds (default 20), `CTXBUS_CRASH_SEED` replays a printed seed.
struct StoreServiceCrashTests {
    static let rounds = ProcessInfo.processInfo.environment["CTXBUS_CRASH_ROUNDS"].flatMap(Int.init) ?? 20
    static let writers = 3

    @Test func killDashNineAtRandomMomentsLosesNothingAcknowledgedAndHalvesNothing() async throws {
        let seed = SeededGenerator.seed(fromEnvironment: "CTXBUS_CRASH_SEED")
        print("StoreServiceCrashTests: seed \(seed) (CTXBUS_CRASH_SEED=\(seed) replays it), \(Self.rounds) rounds")
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let ledger = Locked(CrashLedger())
        let summary = try await onOwnThread {
            try Self.runRounds(in: directory, seed: seed, ledger: ledger)
        }
        let final = ledger.withLock { $0 }
        expectEqual(final.violations, [], "seed \(seed)")
        expectTrue(final.acknowledgedDevices.count + final.acknowledgedBatches.count > Self.rounds, "too little load")
        expectGreaterThan(final.subscriberEventCount, 0, "the subscribers saw no event")
        print("StoreServiceCrashTests: \(summary)")
    }

    /// Runs every round on a thread of its own (the clients block), then restarts once more to check the last one.
    static func runRounds(in directory: URL, seed: UInt64, ledger: Locked<CrashLedger>) throws -> String {
        var random = SeededGenerator(seed: seed)
        for round in 0...rounds {
            let service = try StoreServiceProcess(directory: directory)
            defer { if service.process.isRunning { service.signal(SIGKILL) } }
            let violations = try verifyAfterRestart(socketPath: service.socketPath, ledger: ledger.withLock { $0 })
            ledger.withLock { $0.violations += violations.map { "after round \(round - 1): \($0)" } }
            guard round < rounds else {
                service.signal(SIGTERM)
                _ = service.waitForExit()
                break
            }
            let load = CrashLoad(round: round, ledger: ledger)
            load.start(socketPath: service.socketPath, writers: writers)
            Thread.sleep(forTimeInterval: Double(Int.random(in: 20...400, using: &random)) / 1000)
            service.signal(SIGKILL)
            let status = service.waitForExit()
            if status != 128 + SIGKILL {
                ledger.withLock { $0.violations.append("round \(round): storesvc exited with \(status) before kill") }
            }
            if !load.waitForClients() {
                ledger.withLock { $0.violations.append("round \(round): a client hung after the kill") }
            }
            ledger.withLock { ledger in
                if ledger.fetchTxns != ledger.fetchTxns.sorted() {
                    ledger.violations.append("round \(round): fetch txns went back: \(ledger.fetchTxns)")
                }
            }
        }
        return ledger.withLock {
            "\($0.acknowledgedDevices.count) single and \($0.acknowledgedBatches.count) multi-object saves "
                + "acknowledged (\($0.attemptedBatches.count) multi-object sent), \($0.subscriberEventCount) events, "
                + "last txn \($0.highestTxn)"
        }
    }

    /// Checks the restarted service against what the clients of the previous round were told.
    static func verifyAfterRestart(socketPath: String, ledger: CrashLedger) throws -> [String] {
        var violations: [String] = []
        let connection = try RawBusConnection(path: socketPath)
        try connection.hello()
        let devices = try connection.call(1, "store.fetch", #"{"entity":"Device"}"#)
        let readings = try connection.call(2, "store.fetch", #"{"entity":"Reading"}"#)
        guard let head = devices["result"]?["txn"]?.intValue,
            let deviceObjects = devices["result"]?["objects"]?.arrayValue,
            let readingObjects = readings["result"]?["objects"]?.arrayValue
        else { return ["the fetches after restart failed: \(devices) \(readings)"] }
        let addresses = Set(deviceObjects.compactMap { $0["values"]?["address"]?.stringValue })
        var readingsPerTag: [String: Int] = [:]
        for reading in readingObjects {
            if let tag = reading["values"]?["chain"]?.stringValue { readingsPerTag[tag, default: 0] += 1 }
        }
        if head < ledger.highestTxn { violations.append("txn went back from \(ledger.highestTxn) to \(head)") }
        let lost = ledger.acknowledgedDevices.subtracting(addresses)
        if !lost.isEmpty { violations.append("acknowledged saves lost: \(lost.sorted())") }
        for tag in ledger.attemptedBatches {
            let count = readingsPerTag[tag, default: 0]
            let hasDevice = addresses.contains(tag)
            let isWhole = count == CrashLoad.batchSize - 1 && hasDevice
            if !isWhole, count != 0 || hasDevice {
                violations.append("multi-object save \(tag) half applied: device \(hasDevice), \(count) readings")
            }
            if !isWhole, ledger.acknowledgedBatches.contains(tag) {
                violations.append("acknowledged multi-object save \(tag) lost")
            }
        }
        let history = try historyTxns(connection, since: ledger.subscriberSince)
        let seen = ledger.subscriberTxns
        let expected = history.prefix { $0 <= seen.last ?? ledger.subscriberSince }
        if Array(expected) != seen {
            violations.append(
                "the subscriber since \(ledger.subscriberSince) got txns \(seen), the history has \(Array(expected))")
        }
        return violations
    }

    /// Every txn after `since` in `store.history` whose transaction changed something, paging through it. The
    /// empty ones are the txns a restart after the kill skipped (reserved, so perhaps handed out: `NumberReservations`),
    /// of which subscribers get no event.
    static func historyTxns(_ connection: RawBusConnection, since: Int64) throws -> [Int64] {
        var txns: [Int64] = []
        var after = since
        while true {
            let answer = try connection.call(3, "store.history", #"{"since":\#(after)}"#)
            let page = answer["result"]?["transactions"]?.arrayValue ?? []
            guard let last = page.last?["txn"]?.intValue else { return txns }
            for transaction in page {
                let changes = ["inserted", "updated", "deleted"].reduce(0) {
                    $0 + (transaction[$1]?.arrayValue?.count ?? 0)
                }
                if changes > 0, let txn = transaction["txn"]?.intValue { txns.append(txn) }
            }
            after = last
        }
    }
}
