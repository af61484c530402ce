import ContextBusClient
import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

@testable import ContextBusSQLite
@testable import ContextBusSupport

/// Power cuts of one gateway of a fleet (issue 28): the fleet's published position and each origin's applied position
/// obey the store's rule, after a power cut nothing is applied twice and nothing is skipped, and no gateway keeps a
/// transaction its origin lost.
///
/// Gateway `a`'s storesvc runs on the simulated disk (`--test-power-cut`, `PowerCutDisk`); `b`'s on a real one; a real
/// nats-server between them. Each round `a` saves readings to memory as fast as it can and to disk now and then while
/// `b` saves both kinds; at a moment drawn from the round's seed `a` loses power (storesvc and fleetsvc `kill -9` at
/// once), the cut loses every unsynced write or any subset of them (torn at 512-byte sectors), and `a` starts again
/// on what survived. Then, once nothing is pending: each reading (tagged) is on both gateways exactly once or on
/// neither; every acknowledged durable save of `a` and every acknowledged save of `b` is on both; each side's
/// applied position is the other's last own transaction and its published position its last transaction.
///
/// `a`'s memory saves are what a cut loses. Before the fleet published only durable transactions
/// (`docs/decisions/fleet-publishes-only-durable-transactions.md`) `b` kept the ones `a` lost: the first round failed
/// with `a-m0-… is on b but not on a`. `CTXBUS_FLEET_POWER_CUT_ROUNDS` sets the rounds (default 4; `scripts/soak`
/// runs more), `CTXBUS_POWER_CUT_SEED` replays a printed seed (the same moments and losses).
@Suite(.serialized, .enabled(if: natsServerPath != nil, "nats-server is not installed (scripts/setup installs it)"))
struct FleetPowerCutTests {
    static let rounds = ProcessInfo.processInfo.environment["CTXBUS_FLEET_POWER_CUT_ROUNDS"].flatMap(Int.init) ?? 5

    /// What the gateways' clients were told.
    struct Ledger: Sendable {
        /// Acknowledged saves of one reading each, by tag: the txn, and whether it was a durable save.
        var acknowledged: [String: (txn: Int64, isDurable: Bool)] = [:]
        var violations: [String] = []
    }

    @Test func powerCutsOfAGatewayLeaveEveryTransactionAppliedOnceNoneSkippedAndNoneOnlyElsewhere() async throws {
        let seedText = ProcessInfo.processInfo.environment["CTXBUS_POWER_CUT_SEED"]
        let seed = seedText.flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
        print("FleetPowerCutTests: seed \(seed) (CTXBUS_POWER_CUT_SEED=\(seed) replays it), \(Self.rounds) rounds")
        let nats = try await TestNATSServer.start()
        defer { nats.stop() }
        let disk = makeTestDirectory(prefix: "fleet-power-cut")
        defer { try? FileManager.default.removeItem(atPath: disk) }
        let a = try await TestGateway.start(
            "a", nats: nats, storeArguments: ["--test-power-cut", disk, "--test-checkpoint-pages", "64"])
        defer { a.stop() }
        let b = try await TestGateway.start("b", nats: nats)
        defer { b.stop() }
        let ledger = Locked(Ledger())
        var cuts = PowerCut.Outcome()
        var report: [String] = []
        var writerCounts: [String: Int64] = [:]

        for round in 0..<Self.rounds {
            var random = SeededRandom(seed: seed &+ UInt64(round) &* 0x9E37_79B9)
            // The first round loses everything unsynced; later ones everything or any subset.
            let loss: PowerCut.Loss = round == 0 || random.coin() ? .everything : .anySubset
            let moment = 300 + random.int(1_200)
            let stop = AtomicFlag()
            let writers = [
                Task { await Self.write(on: a, tag: "a-m\(round)", durability: "memory", pause: 0, stop, ledger) },
                Task { await Self.write(on: a, tag: "a-d\(round)", durability: "disk", pause: 300, stop, ledger) },
                Task { await Self.write(on: b, tag: "b-m\(round)", durability: "memory", pause: 5, stop, ledger) },
                Task { await Self.write(on: b, tag: "b-d\(round)", durability: "disk", pause: 10, stop, ledger) },
            ]
            try await Task.sleep(for: .milliseconds(moment))
            // What a's writer did this round, just before the cut: saves, commits, and the syncs the fleet asked for.
            if let stats = try? await a.call("store.stats") {
                for key in ["saves", "commits", "durabilitySyncs"] {
                    writerCounts[key, default: 0] += stats[key]?.intValue ?? 0
                }
            }
            await a.killBoth()
            _ = stop.setOnce()
            for writer in writers { await writer.value }
            let outcome = try PowerCut.apply(to: disk, losing: loss, using: &random)
            cuts.writesLost += outcome.writesLost
            cuts.writesTorn += outcome.writesTorn
            cuts.writesKept += outcome.writesKept
            report.append("round \(round): cut at \(moment) ms, lose \(loss.rawValue): \(outcome)")
            print("FleetPowerCutTests: \(report.last!)")
            try await a.startStore()
            try await a.startFleet()
        }

        // Settled: nothing pending, and each side has applied the other's last own transaction.
        let aLast = try await Self.lastOwnTransaction(of: a)
        let bLast = try await Self.lastOwnTransaction(of: b)
        try await Self.waitUntilSettled(a, applying: ("b", bLast), b, applying: ("a", aLast))

        let onA = try await Self.readingsByTag(on: a)
        let onB = try await Self.readingsByTag(on: b)
        let told = ledger.withLock { $0 }
        var violations = told.violations
        for (tag, count) in onA where count != 1 { violations.append("\(tag) is on a \(count) times") }
        for (tag, count) in onB where count != 1 { violations.append("\(tag) is on b \(count) times") }
        for tag in Set(onA.keys).subtracting(onB.keys).sorted() { violations.append("\(tag) is on a but not on b") }
        for tag in Set(onB.keys).subtracting(onA.keys).sorted() { violations.append("\(tag) is on b but not on a") }
        var memoryLost = 0
        for (tag, save) in told.acknowledged.sorted(by: { $0.key < $1.key }) where onA[tag] == nil || onB[tag] == nil {
            if tag.hasPrefix("a-m") {
                memoryLost += 1  // a memory save a cut took: allowed, on neither gateway (checked above)
            } else {
                violations.append("\(tag) (txn \(save.txn), durable \(save.isDurable)) was acknowledged and is lost")
            }
        }
        let aStatus = try await a.status()
        let bStatus = try await b.status()
        let aLastTxn = try await a.call("store.replica").objectValue?["lastTxn"]?.intValue
        let bLastTxn = try await b.call("store.replica").objectValue?["lastTxn"]?.intValue
        if aStatus.objectValue?["published"]?.intValue != aLastTxn {
            violations.append("a published up to \(aStatus) but its last txn is \(aLastTxn ?? -1)")
        }
        if bStatus.objectValue?["published"]?.intValue != bLastTxn {
            violations.append("b published up to \(bStatus) but its last txn is \(bLastTxn ?? -1)")
        }
        expectEqual(violations, [], "seed \(seed)")
        expectGreaterThan(told.acknowledged.keys.filter { $0.hasPrefix("a-m") }.count, Self.rounds, "too little load")
        print(
            "FleetPowerCutTests: \(told.acknowledged.count) saves acknowledged, \(onA.count) readings on each gateway, "
                + "\(memoryLost) memory saves of a lost to the cuts; a's last own txn \(aLast), b's \(bLast); unsynced "
                + "writes \(cuts.writesLost) lost, \(cuts.writesTorn) torn, \(cuts.writesKept) kept; a's writer before "
                + "the cuts: \(writerCounts["saves"] ?? 0) saves (b's applied included) in \(writerCounts["commits"] ?? 0) commits, "
                + "\(writerCounts["durabilitySyncs"] ?? 0) syncs asked for by the fleet")
    }

    /// Saves one reading tagged `<tag>-<i>` at a time until `stop` or a failure (the gateway lost power), recording
    /// each acknowledged one.
    static func write(
        on gateway: TestGateway, tag: String, durability: String, pause: Int, _ stop: AtomicFlag,
        _ ledger: Locked<Ledger>
    ) async {
        for i in 1... {
            guard !stop.isSet else { return }
            let name = "\(tag)-\(i)"
            let params: JSONValue = .object([
                "insert": .array([
                    .object([
                        "entity": .string("Reading"),
                        "values": .object([
                            "characteristic": .string("2a19"), "value": .string("AQ=="),
                            "time": .string("2026-01-01T00:00:00Z"), "chain": .string(name),
                        ]),
                    ])
                ]),
                "durability": .string(durability), "author": .string(name),
            ])
            guard let answer = try? await gateway.save(params) else { return }
            guard let txn = answer.objectValue?["txn"]?.intValue else {
                ledger.withLock { $0.violations.append("save \(name) answered \(answer)") }
                return
            }
            ledger.withLock { $0.acknowledged[name] = (txn, durability == "disk") }
            if pause > 0 { try? await Task.sleep(for: .milliseconds(pause)) }
        }
        return
    }

    /// The highest txn of the gateway's history not authored `fleet:*` (its own, empty ones a cut left included).
    static func lastOwnTransaction(of gateway: TestGateway) async throws -> Int64 {
        var since: Int64 = 0
        var last: Int64 = 0
        while true {
            let page = try await gateway.call("store.history", .object(["since": .int(since)]))
            let transactions = page.objectValue?["transactions"]?.arrayValue ?? []
            guard let final = transactions.last?.objectValue?["txn"]?.intValue else { return last }
            for transaction in transactions {
                let members = transaction.objectValue ?? [:]
                if members["author"]?.stringValue?.hasPrefix("fleet:") != true, let txn = members["txn"]?.intValue {
                    last = txn
                }
            }
            since = final
        }
    }

    /// Every reading's `chain` tag on the gateway, with how many readings carry it.
    static func readingsByTag(on gateway: TestGateway) async throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for reading in try await gateway.objects("Reading") {
            if let tag = reading["values"]?.objectValue?["chain"]?.stringValue { counts[tag, default: 0] += 1 }
        }
        return counts
    }

    /// Waits until both gateways have nothing pending and each has applied the other's last own transaction.
    static func waitUntilSettled(
        _ a: TestGateway, applying aWants: (String, Int64), _ b: TestGateway, applying bWants: (String, Int64)
    ) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            let aStatus = try? await a.status()
            let bStatus = try? await b.status()
            func isSettled(_ status: JSONValue?, _ wants: (String, Int64)) -> Bool {
                status?.objectValue?["pending"]?.intValue == 0
                    && status?.objectValue?["applied"]?.objectValue?[wants.0]?.intValue == wants.1
            }
            if isSettled(aStatus, aWants), isSettled(bStatus, bWants) { return }
            guard ContinuousClock.now < deadline else {
                let text = { (status: JSONValue?) in status.map { (try? JSONWriter().string($0)) ?? "" } ?? "none" }
                throw ChildProcessError.timedOut(
                    "a to apply b's txn \(aWants.1) and b a's txn \(bWants.1), nothing pending",
                    output: "a: \(text(aStatus))\nb: \(text(bStatus))\n-- a's fleetsvc:\n"
                        + String(a.fleet?.standardError.suffix(3000) ?? ""),
                    errors: String(b.fleet?.standardError.suffix(3000) ?? ""))
            }
            try await Task.sleep(for: .milliseconds(200))
        }
    }
}
