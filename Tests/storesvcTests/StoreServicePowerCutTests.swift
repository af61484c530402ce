import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSQLite
@testable import ContextBusSupport

/// Power cuts of a real `storesvc` under mixed load, round after round on one database (issue 28).
///
/// The service runs on a simulated disk (`--test-power-cut`: `PowerCutDisk` under the store's own VFS) that remembers
/// every write no sync has made durable. Each round chooses, from its seed, a moment: a freeze point (the disk stops
/// every write just before or after the N-th WAL write, WAL sync, database write or sync of a checkpoint, backup write
/// or sync, rename, directory sync) or a random moment of the load; then `kill -9`, and a cut that loses every unsynced
/// change, any subset of them (writes torn at 512-byte sectors), or none; then the service starts again on what
/// survived, without a hand. After every restart: every save acknowledged as durable is there with its values; no save
/// is there in part; the acknowledged saves that are gone are memory saves and the newest of all (no holes); no txn
/// goes back (and so none is reused) and no ID is given to another object; a subscriber resuming with `since` gets
/// every transaction after it; backups that were answered are whole; every chain devicesvc answered `"recorded":
/// true` is there with a reading per value (a real devicesvc on the simulated BlueZ records into every round's
/// service, where the machine has dbus-daemon and python3-dbus); `PRAGMA integrity_check` is `ok`.
///
/// Round 6, and every 8th after it, is quiet: no writer of durable saves, so the memory saves and the recordings
/// commit alone and a cut finds unsynced memory saves (otherwise the durable writers' groups sync nearly every
/// memory save at once, and a lost one is rare). Round 4, and every 8th after it, starts the service with a model that adds an optional, indexed attribute with a
/// default to `Device` (an in-place migration: `ALTER TABLE`, the default written into every row, an index, in one
/// transaction at open), its point drawn among the start's first WAL writes and syncs and checkpoint writes; the
/// checks then also want every device to have the default.
///
/// `CTXBUS_POWER_CUT_ROUNDS` sets the rounds (default 8; `scripts/soak` runs ten a minute of soak),
/// `CTXBUS_POWER_CUT_SEED` replays a printed seed (the same points and losses; what is in flight at a point depends
/// on timing).
struct StoreServicePowerCutTests {
    static let rounds = ProcessInfo.processInfo.environment["CTXBUS_POWER_CUT_ROUNDS"].flatMap(Int.init) ?? 8

    @Test func powerCutsAtRandomPointsLoseNoAcknowledgedSaveAndLeaveAWholeStore() async throws {
        let seed = SeededGenerator.seed(fromEnvironment: "CTXBUS_POWER_CUT_SEED")
        print(
            "StoreServicePowerCutTests: seed \(seed) (CTXBUS_POWER_CUT_SEED=\(seed) replays it), \(Self.rounds) rounds")
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let ledger = Locked(PowerCutLedger())
        let summary = try await onOwnThread { try Self.runRounds(in: directory, seed: seed, ledger: ledger) }
        let final = ledger.withLock { $0 }
        expectEqual(final.violations, [], "seed \(seed)")
        expectGreaterThan(final.inserts.count, Self.rounds, "too little load")
        print("StoreServicePowerCutTests: \(summary)")
    }

    /// The defect the rounds found first (`after round 0: txn went back from 321 to 320`, then
    /// `Device/225 was answered for m0-36, which a cut lost, and now names counter-r1-w3`): a memory save commits
    /// without a sync, is answered with its txn and ID, and a power cut loses it; the restarted store used to hand
    /// the same txn and ID to the next save. Now the numbers a commit without a sync hands out are reserved by a
    /// synced one (`NumberReservations`), and the restarted store goes on after them.
    @Test func aMemorySaveLostToAPowerCutLeavesItsTxnAndItsIDToNoOtherSave() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let disk = directory.appendingPathComponent("disk").path
        // No checkpoint: nothing but the saves below writes or syncs the WAL.
        let arguments = ["--test-power-cut", disk, "--test-checkpoint-pages", "0"]
        try await onOwnThread {
            var service = try StoreServiceProcess(directory: directory, arguments: arguments)
            var connection = try RawBusConnection(path: service.socketPath)
            try connection.hello()
            let durable = try connection.call(1, "store.save", PowerCutLoad.insert(address: "d1", durability: "disk"))
            // The first memory save syncs: it reserves the txns the next ones hand out without a sync.
            _ = try connection.call(2, "store.save", PowerCutLoad.insert(address: "m0", durability: "memory"))
            var lost: [(txn: Int64, id: String)] = []
            for (i, address) in ["m1", "m2"].enumerated() {
                let answer = try connection.call(
                    3 + i, "store.save", PowerCutLoad.insert(address: address, durability: "memory"))
                let txn = try #require(answer["result"]?["txn"]?.intValue)
                lost.append((txn, try #require(answer["result"]?["ids"]?["d"]?.stringValue)))
            }
            expectEqual(lost.map(\.txn), [3, 4], "\(durable)")
            service.signal(SIGKILL)
            _ = service.waitForExit()
            var random = SeededGenerator(seed: 1)
            let outcome = try PowerCut.apply(to: disk, losing: .everything, using: &random)
            expectGreaterThan(outcome.writesLost, 0, "the memory saves' WAL frames were not synced")

            service = try StoreServiceProcess(directory: directory, arguments: arguments)
            defer { service.destroy() }
            connection = try RawBusConnection(path: service.socketPath)
            try connection.hello()
            let devices = try connection.call(1, "store.fetch", #"{"entity":"Device"}"#)
            let addresses = (devices["result"]?["objects"]?.arrayValue ?? []).compactMap {
                $0["values"]?["address"]?.stringValue
            }
            expectEqual(addresses, ["d1", "m0"], "the cut lost the unsynced memory saves")
            let head = try #require(devices["result"]?["txn"]?.intValue)
            expectGreaterThanOrEqual(head, 4, "the txn went back")
            let next = try connection.call(2, "store.save", PowerCutLoad.insert(address: "d2", durability: "disk"))
            let txn = try #require(next["result"]?["txn"]?.intValue)
            let id = try #require(next["result"]?["ids"]?["d"]?.stringValue)
            expectGreaterThan(txn, 4, "the txn of a lost save was handed out again")
            expectFalse(lost.map(\.id).contains(id), "the ID of a lost save was handed out again: \(id)")
            // Every txn still has a history row: the ones a crash may have handed out are empty transactions.
            var txns: [Int64] = []
            while true {
                let page = try connection.call(3, "store.history", #"{"since":\#(txns.last ?? 0)}"#)
                let more = (page["result"]?["transactions"]?.arrayValue ?? []).compactMap { $0["txn"]?.intValue }
                guard !more.isEmpty else { break }
                txns += more
            }
            expectEqual(txns, Array(1...txn))
        }
    }

    /// How a start of the service ended.
    enum Start {
        case serving, frozen, exited
    }

    /// Runs every round on a thread of its own (the clients block), then starts once more to check the last one.
    static func runRounds(in directory: URL, seed: UInt64, ledger: Locked<PowerCutLedger>) throws -> String {
        let disk = directory.appendingPathComponent("disk").path
        let backups = directory.appendingPathComponent("backups").path
        try FileManager.default.createDirectory(atPath: backups, withIntermediateDirectories: true)
        var points: [String] = []
        var cuts = PowerCut.Outcome()
        // devicesvc on the simulated BlueZ, recording into the service of every round (where the machine has them).
        let devices =
            RecordingDeviceService.isSupported
            ? try RecordingDeviceService.start(
                storeSocket: directory.appendingPathComponent("store.sock").path, in: directory.path) : nil
        defer { devices?.stop() }
        if devices == nil { print("StoreServicePowerCutTests: no recording client (needs dbus-daemon, python3-dbus)") }
        // The last round whose load ran: the checks after a restart are about it (a round whose point came while
        // the service started, or while it was being checked, ran none, and the next start checks the same one).
        var loadRound = -1
        // Migrations so far: from the first on, every start passes the migrated model.
        var migratedAttributes: [String] = []
        let modelPath = directory.appendingPathComponent("migrated-model.json").path
        for round in 0...rounds {
            // A generator per round: a seed replays every round's point and loss whatever the others drew.
            var random = SeededGenerator(seed: seed &+ UInt64(round) &* 0x9E37_79B9)
            let isMigration = round < rounds && round % 8 == 4
            let plan = isMigration ? PowerCutPlan.migration(using: &random) : PowerCutPlan.random(using: &random)
            var arguments = ["--test-power-cut", disk, "--history", "1000", "--test-checkpoint-pages", "64"]
            if round < rounds, let point = plan.freezePoint {
                arguments += ["--test-power-cut-freeze", point.description]
            }
            if isMigration {
                migratedAttributes.append("firmware\(migratedAttributes.count + 1)")
                try migratedModel(adding: migratedAttributes).write(
                    toFile: modelPath, atomically: true, encoding: .utf8)
            }
            let label =
                isMigration ? "(migrating to \(migratedAttributes.last!)) " : round % 8 == 6 ? "(quiet) " : ""
            if !migratedAttributes.isEmpty { arguments += ["--model", modelPath] }
            let service = try StoreServiceProcess(directory: directory, arguments: arguments, waitForSocket: false)
            defer { if service.process.isRunning { service.signal(SIGKILL) } }
            switch waitForStart(of: service, disk: disk) {
            case .exited:
                ledger.withLock { $0.violations.append("round \(round): storesvc did not start: \(service.log)") }
                return "stopped at round \(round)"
            case .frozen:
                // The point came while the service started (the repair of the previous cut, its first commits).
                points.append("\(label)\(plan.freezePoint!) while starting")
            case .serving:
                guard
                    let checked = verifyUnlessFrozen(
                        service, disk: disk, loadRound: loadRound, ledger: ledger,
                        migratedAttributes: migratedAttributes)
                else {
                    // The point came while the checks ran (the checkpoint after a repair, say): they run again on
                    // what the next cut leaves.
                    points.append("\(label)\(plan.freezePoint!) while checking")
                    break
                }
                ledger.withLock { ledger in
                    ledger.violations += checked.violations.map { "after round \(loadRound): \($0)" }
                    ledger.memorySavesLost += checked.lostMemoryInserts.count
                    ledger.eventsOfLostTransactions += checked.eventsOfLostTransactions
                    for tag in checked.lostMemoryInserts {
                        ledger.lostInserts[tag] = ledger.inserts.removeValue(forKey: tag)
                    }
                    for tag in checked.reusedLostIDs { ledger.lostInserts[tag] = nil }
                }
                guard round < rounds else {
                    service.signal(SIGTERM)
                    let status = service.waitForExit()
                    let integrity = try integrityCheck(service.databasePath)
                    ledger.withLock { ledger in
                        if status != 0 { ledger.violations.append("the last stop exited with \(status)") }
                        if integrity != "ok" { ledger.violations.append("after the last stop: \(integrity)") }
                    }
                    break
                }
                loadRound = round
                let load = PowerCutLoad(
                    round: round, ledger: ledger, backupDirectory: backups, deviceSocket: devices?.socketPath,
                    isQuiet: round % 8 == 6)
                load.start(socketPath: service.socketPath)
                let frozen = waitForFreeze(disk: disk, upTo: .milliseconds(plan.fallbackMilliseconds))
                points.append(label + (frozen ? plan.freezePoint!.description : "a random moment of the load"))
                service.signal(SIGKILL)
                _ = service.waitForExit()
                if !load.waitForClients() {
                    ledger.withLock { $0.violations.append("round \(round): a client hung after the kill") }
                }
                ledger.withLock { ledger in
                    if ledger.fetchTxns != ledger.fetchTxns.sorted() {
                        ledger.violations.append("round \(round): fetch txns went back: \(ledger.fetchTxns)")
                    }
                }
            }
            guard round < rounds else { break }
            if service.process.isRunning {
                service.signal(SIGKILL)
                _ = service.waitForExit()
            }
            let outcome = try PowerCut.apply(to: disk, losing: plan.loss, using: &random)
            print("StoreServicePowerCutTests: round \(round): \(points.last!), lose \(plan.loss.rawValue): \(outcome)")
            cuts.files += outcome.files
            cuts.writesKept += outcome.writesKept
            cuts.writesLost += outcome.writesLost
            cuts.writesTorn += outcome.writesTorn
            cuts.directoryChangesUndone += outcome.directoryChangesUndone
        }
        return ledger.withLock { ledger in
            let durable = ledger.inserts.values.filter(\.isDurable).count
            return "\(durable) durable and \(ledger.memorySavesAcknowledged) memory inserts acknowledged "
                + "(\(ledger.memorySavesLost) memory ones lost), \(ledger.recordedChains.count) chains recorded "
                + "(\(ledger.unrecordedChains) not), \(ledger.subscriberEventCount) events "
                + "(\(ledger.eventsOfLostTransactions) of lost transactions), last txn \(ledger.highestTxn); cuts: "
                + "\(cuts.writesLost) unsynced writes lost, \(cuts.writesTorn) torn, \(cuts.writesKept) kept, "
                + "\(cuts.directoryChangesUndone) directory changes undone; points: \(points.joined(separator: ", "))"
        }
    }

    /// Waits until the service serves, froze while starting, or exited (a guard of a minute against a hang).
    static func waitForStart(of service: StoreServiceProcess, disk: String) -> Start {
        let marker = (disk as NSString).appendingPathComponent(PowerCutDisk.frozenMarker)
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if RawBusConnection.canConnect(to: service.socketPath) { return .serving }
            if FileManager.default.fileExists(atPath: marker) { return .frozen }
            if !service.process.isRunning { return .exited }
            Thread.sleep(forTimeInterval: 0.005)
        }
        return .exited
    }

    /// Waits until the disk froze, or `limit` passed (then the kill comes at that random moment instead).
    static func waitForFreeze(disk: String, upTo limit: Duration) -> Bool {
        let marker = (disk as NSString).appendingPathComponent(PowerCutDisk.frozenMarker)
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if FileManager.default.fileExists(atPath: marker) { return true }
            Thread.sleep(forTimeInterval: 0.002)
        }
        return FileManager.default.fileExists(atPath: marker)
    }

    /// The default model with `attributes` added to `Device`, each optional, indexed and defaulting to `"v1"`: a
    /// model the store migrates an existing file to in place (`docs/persistence.md`, "Model changes and
    /// migration"), as JSON for `--model`.
    static func migratedModel(adding attributes: [String]) throws -> String {
        let entities = Model.deviceReadings.entities.map { entity in
            guard entity.name == "Device" else { return entity }
            var migrated = entity
            migrated.attributes += attributes.map {
                AttributeDescription($0, .string, optional: true, indexed: true, default: .string("v1"))
            }
            return migrated
        }
        return try JSONWriter().string(try Model(entities: entities).jsonValue)
    }

    static func integrityCheck(_ path: String) throws -> String {
        let connection = try SQLiteConnection(path: path, readOnly: true, busyTimeoutMilliseconds: 5_000)
        defer { connection.close() }
        return try connection.text("PRAGMA integrity_check") ?? "no answer"
    }

    // MARK: - Checks

    /// What the checks after a restart found.
    struct Verification {
        var violations: [String] = []
        /// Tags of the acknowledged memory inserts the cut lost (allowed, as the newest of all).
        var lostMemoryInserts: [String] = []
        /// Tags of lost inserts whose ID now names another object (reported once).
        var reusedLostIDs: [String] = []
        /// Events the subscriber got for transactions the cut lost (memory saves' events go out unsynced).
        var eventsOfLostTransactions = 0
    }

    /// Checks the restarted service (on a thread of its own); `nil` when its disk froze meanwhile (a freeze point
    /// reached by the checkpoint after a repair, say): the service is killed, and the checks did not finish.
    static func verifyUnlessFrozen(
        _ service: StoreServiceProcess, disk: String, loadRound: Int, ledger: Locked<PowerCutLedger>,
        migratedAttributes: [String]
    ) -> Verification? {
        let marker = (disk as NSString).appendingPathComponent(PowerCutDisk.frozenMarker)
        let result = Locked<Verification?>(nil)
        let done = DispatchSemaphore(value: 0)
        let (socketPath, databasePath, snapshot) = (service.socketPath, service.databasePath, ledger.withLock { $0 })
        Thread.detachNewThread {
            let checked = verify(
                socketPath: socketPath, databasePath: databasePath, loadRound: loadRound, ledger: snapshot,
                migratedAttributes: migratedAttributes)
            result.withLock { $0 = checked }
            done.signal()
        }
        while done.wait(timeout: .now() + .milliseconds(5)) == .timedOut {
            guard FileManager.default.fileExists(atPath: marker) else { continue }
            service.signal(SIGKILL)
            _ = service.waitForExit()
            done.wait()
            return nil
        }
        return result.withLock { $0 }
    }

    /// Checks the restarted service against what the clients of the rounds up to `loadRound` were told.
    static func verify(
        socketPath: String, databasePath: String, loadRound: Int, ledger: PowerCutLedger, migratedAttributes: [String]
    )
        -> Verification
    {
        do {
            return try verifyOrThrow(
                socketPath: socketPath, databasePath: databasePath, loadRound: loadRound, ledger: ledger,
                migratedAttributes: migratedAttributes)
        } catch {
            return Verification(violations: ["the checks failed: \(error)"])
        }
    }

    private static func verifyOrThrow(
        socketPath: String, databasePath: String, loadRound: Int, ledger: PowerCutLedger, migratedAttributes: [String]
    ) throws -> Verification {
        var violations: [String] = []
        var lostMemoryInserts: [String] = []
        var reusedLostIDs: [String] = []
        let connection = try RawBusConnection(path: socketPath, receiveTimeoutSeconds: 120)
        try connection.hello()
        let devices = try connection.call(1, "store.fetch", #"{"entity":"Device"}"#)
        let readings = try connection.call(2, "store.fetch", #"{"entity":"Reading","result":"objects"}"#)
        guard let head = devices["result"]?["txn"]?.intValue,
            let deviceObjects = devices["result"]?["objects"]?.arrayValue,
            let readingObjects = readings["result"]?["objects"]?.arrayValue
        else { return Verification(violations: ["the fetches after the restart failed: \(devices) \(readings)"]) }
        var byAddress: [String: (id: String, name: String?)] = [:]
        var addressByID: [String: String] = [:]
        var unmigrated = 0
        for object in deviceObjects {
            guard let id = object["id"]?.stringValue, let address = object["values"]?["address"]?.stringValue else {
                continue
            }
            // A migration is whole: every device has each added attribute's default (existing rows got it in the
            // migration's transaction, new ones at their insert).
            if migratedAttributes.contains(where: { object["values"]?[$0] != .string("v1") }) { unmigrated += 1 }
            byAddress[address] = (id, object["values"]?["name"]?.stringValue)
            addressByID[id] = address
        }
        var readingsPerTag: [String: Int] = [:]
        for reading in readingObjects {
            if let tag = reading["values"]?["chain"]?.stringValue { readingsPerTag[tag, default: 0] += 1 }
        }

        if unmigrated > 0 {
            violations.append(
                "\(unmigrated) devices lack the default of an attribute a migration added: \(migratedAttributes)")
        }

        // Chains devicesvc answered `"recorded": true` are there, each with a reading per value it read.
        for (chain, readings) in ledger.recordedChains where readingsPerTag[chain, default: 0] != readings {
            violations.append(
                "chain \(chain) was answered recorded with \(readings) readings, the store has "
                    + "\(readingsPerTag[chain, default: 0])")
        }

        // Txns never go back: every one a client was told is at most the head (so the next is never reused).
        if head < ledger.highestTxn { violations.append("txn went back from \(ledger.highestTxn) to \(head)") }

        // Acknowledged inserts: durable ones are there with their values, under the ID they were answered with; an
        // ID never names another object.
        var presence: [(txn: Int64, isPresent: Bool, tag: String, isDurable: Bool)] = []
        for insert in ledger.inserts.values {
            if let found = byAddress[insert.tag] {
                if found.id != insert.id {
                    violations.append("\(insert.tag) is \(found.id), but its save was answered with \(insert.id)")
                }
                if ledger.counters[insert.tag] == nil, found.name != "v-\(insert.tag)" {
                    violations.append("\(insert.tag) has the name \(found.name ?? "nil")")
                }
            } else if insert.isDurable {
                violations.append("the durable save of \(insert.tag) (txn \(insert.txn)) was acknowledged and is lost")
            } else if insert.round < loadRound {
                violations.append("the memory save of \(insert.tag) survived an earlier cut and is lost now")
            } else {
                lostMemoryInserts.append(insert.tag)
            }
            if let other = addressByID[insert.id], other != insert.tag {
                violations.append("\(insert.id) was answered for \(insert.tag) and now names \(other)")
            }
            if insert.round == loadRound {
                presence.append((insert.txn, byAddress[insert.tag] != nil, insert.tag, insert.isDurable))
            }
        }

        for insert in ledger.lostInserts.values {
            if let other = addressByID[insert.id] {
                violations.append(
                    "\(insert.id) was answered for \(insert.tag), which a cut lost, and now names \(other)")
                reusedLostIDs.append(insert.tag)
            }
        }

        // Multi-object saves: all of it or none of it.
        for tag in ledger.attemptedBatches {
            let count = readingsPerTag[tag, default: 0]
            let hasDevice = byAddress[tag] != nil
            let isWhole = count == PowerCutLoad.batchSize - 1 && hasDevice
            if !isWhole, count != 0 || hasDevice {
                violations.append("multi-object save \(tag) half there: device \(hasDevice), \(count) readings")
            }
            if !isWhole, ledger.acknowledgedBatches.contains(tag) {
                violations.append("acknowledged multi-object save \(tag) lost")
            }
        }

        // Updates: the counter holds the last acknowledged value or a later one sent.
        for (address, counter) in ledger.counters {
            guard let found = byAddress[address] else { continue }  // a lost insert is reported above
            let value = found.name.flatMap { $0.hasPrefix("k-") ? Int($0.dropFirst(2)) : 0 } ?? 0
            if value < counter.acknowledged || value > counter.sent {
                violations.append(
                    "\(address) holds k-\(value); acknowledged k-\(counter.acknowledged), sent up to k-\(counter.sent)")
            }
            if counter.round == loadRound {
                for update in counter.updates { presence.append((update.txn, value >= update.value, address, true)) }
            }
        }

        // What the last cut lost of the acknowledged saves is the newest of them, in txn order: no holes.
        let lost = presence.filter { !$0.isPresent }
        if let firstLost = lost.min(by: { $0.txn < $1.txn }),
            let lastKept = presence.filter(\.isPresent).max(by: { $0.txn < $1.txn }), lastKept.txn > firstLost.txn
        {
            violations.append(
                "a hole: \(firstLost.tag) (txn \(firstLost.txn)) is lost, \(lastKept.tag) (txn \(lastKept.txn)) is there"
            )
        }

        // A subscriber resuming with `since` got every transaction after it that survived, in order (from the oldest
        // the history still has, when the round committed more than it keeps). The events of transactions the cut
        // lost (memory saves' events go out before the WAL is synced; their txns are now empty transactions or past
        // the head) are the newest it got, and none of them is a durable save's.
        let (since, history) = try nonEmptyHistoryTxns(connection, since: ledger.subscriberSince)
        let surviving = Set(history)
        let seen = ledger.subscriberTxns.filter { $0 > since }
        let seenKept = seen.filter { surviving.contains($0) }
        let seenLost = seen.filter { !surviving.contains($0) }
        let expected = history.prefix { $0 <= seenKept.last ?? since }
        if Array(expected) != seenKept {
            let first = Array(zip(expected, seenKept)).firstIndex { $0 != $1 } ?? min(expected.count, seenKept.count)
            violations.append(
                "the subscriber since \(ledger.subscriberSince) got \(seenKept.count) events of surviving transactions, "
                    + "the history has \(expected.count) up to the last of them; from the \(first)th: got "
                    + "\(seenKept.dropFirst(first).prefix(5)), history \(Array(expected).dropFirst(first).prefix(5))")
        }
        if let lastKept = seenKept.last, let firstLost = seenLost.first, firstLost < lastKept {
            violations.append("a hole in the events: txn \(firstLost) is lost, txn \(lastKept) survived")
        }
        let durableTxns = Set(
            ledger.inserts.values.filter(\.isDurable).map(\.txn)
                + ledger.counters.values.flatMap { $0.updates.map(\.txn) })
        for txn in seenLost where durableTxns.contains(txn) {
            violations.append("the subscriber got txn \(txn), a durable save's, and the store lost it")
        }

        let integrity = try integrityCheck(databasePath)
        if integrity != "ok" { violations.append("integrity_check: \(integrity)") }

        // Backups that were answered are there, whole, with the txn they were answered with.
        for backup in ledger.backups {
            guard FileManager.default.fileExists(atPath: backup.path) else {
                violations.append("backup \(backup.path) was answered and is gone")
                continue
            }
            let copy = try SQLiteConnection(path: backup.path, readOnly: true, busyTimeoutMilliseconds: 5_000)
            defer { copy.close() }
            let check = try copy.text("PRAGMA integrity_check")
            let txn = try copy.integer(SQLiteSchemaSetup.lastTransactionSQL)
            if check != "ok" || txn != backup.txn {
                violations.append(
                    "backup \(backup.path): integrity \(check ?? "nil"), txn \(txn ?? -1) for \(backup.txn)")
            }
        }

        return Verification(
            violations: violations, lostMemoryInserts: lostMemoryInserts, reusedLostIDs: reusedLostIDs,
            eventsOfLostTransactions: seenLost.count)
    }

    /// Every txn after `since` in `store.history` whose transaction changed something, paging through it; when the
    /// history no longer reaches back to `since` (`410`), from the oldest it has, and that `since`.
    static func nonEmptyHistoryTxns(_ connection: RawBusConnection, since: Int64) throws -> (Int64, [Int64]) {
        var txns: [Int64] = []
        var since = since
        var after = since
        while true {
            let answer = try connection.call(3, "store.history", #"{"since":\#(after)}"#)
            if answer["error"]?["code"]?.intValue == 410, let oldest = answer["error"]?["data"]?["oldest"]?.intValue,
                txns.isEmpty
            {
                (since, after) = (oldest - 1, oldest - 1)
                continue
            }
            guard let page = answer["result"]?["transactions"]?.arrayValue else {
                throw RawBusConnectionError.refused(answer)
            }
            guard let last = page.last?["txn"]?.intValue else { return (since, txns) }
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
