import Foundation

@testable import ContextBusSupport

/// The mixed load of one power-cut round, each client on a thread of its own with a blocking connection, recording
/// what it was told into the ledger until the service dies under it:
///
/// - `durableWriters` writers of durable saves (grouped by the writer into group commits): one-object inserts, a
///   device with three readings in one save, and updates of the writer's counter device;
/// - a writer of memory saves, one after the other;
/// - a subscriber resuming with `since` from what the previous round's saw, and a fetcher;
/// - a client taking backups one after the other;
/// - with a `RecordingDeviceService`, a client per simulated device running `record: true` chains through devicesvc,
///   which saves each recording as one durable transaction and answers `"recorded": true` only once it is.
final class PowerCutLoad: Sendable {
    static let durableWriters = 8
    /// Objects per multi-object save: one `Device` and `batchSize - 1` `Reading`s pointing at it.
    static let batchSize = 4

    let round: Int
    let ledger: Locked<PowerCutLedger>
    let backupDirectory: String
    /// devicesvc's socket, when the recording client runs.
    let deviceSocket: String?
    /// Writers of durable saves this round: `durableWriters`, or none in a quiet round, where the memory saves
    /// (and the recordings' durable ones) commit alone and a cut finds unsynced memory saves far more often.
    let writers: Int
    private let group = DispatchGroup()

    init(
        round: Int, ledger: Locked<PowerCutLedger>, backupDirectory: String, deviceSocket: String? = nil,
        isQuiet: Bool = false
    ) {
        self.round = round
        self.ledger = ledger
        self.backupDirectory = backupDirectory
        self.deviceSocket = deviceSocket
        writers = isQuiet ? 0 : Self.durableWriters
    }

    /// Starts every client against `socketPath`.
    func start(socketPath: String) {
        let since = ledger.withLock { ledger in
            ledger.subscriberSince = ledger.nextSubscriberSince
            ledger.subscriberTxns = []
            ledger.fetchTxns = []
            ledger.backups = []
            return ledger.subscriberSince
        }
        detach { self.subscribe(socketPath, since: since) }
        detach { self.fetch(socketPath) }
        detach { self.writeMemorySaves(socketPath) }
        detach { self.takeBackups(socketPath) }
        for writer in 0..<writers { detach { self.writeDurableSaves(socketPath, writer: writer) } }
        if let deviceSocket {
            for address in RecordingDeviceService.addresses { detach { self.recordChains(deviceSocket, address) } }
        }
    }

    /// Waits (up to a generous guard) until every client has seen the service die; `false` if one hangs.
    func waitForClients() -> Bool {
        group.wait(timeout: .now() + 60) == .success
    }

    private func detach(_ body: @escaping @Sendable () -> Void) {
        group.enter()
        Thread.detachNewThread {
            body()
            self.group.leave()
        }
    }

    private func record(_ update: (inout PowerCutLedger) -> Void) {
        ledger.withLock { update(&$0) }
    }

    private func connect(_ socketPath: String) -> RawBusConnection? {
        guard let connection = try? RawBusConnection(path: socketPath, receiveTimeoutSeconds: 120),
            (try? connection.hello()) != nil
        else { return nil }
        return connection
    }

    // MARK: - Writers

    private func writeDurableSaves(_ socketPath: String, writer: Int) {
        guard let connection = connect(socketPath) else { return }
        let counterAddress = "counter-r\(round)-w\(writer)"
        guard
            let answer = try? connection.call(
                1, "store.save", Self.insert(address: counterAddress, durability: "disk")),
            let txn = answer["result"]?["txn"]?.intValue, let id = answer["result"]?["ids"]?["d"]?.stringValue
        else { return }
        record { ledger in
            ledger.inserts[counterAddress] = .init(tag: counterAddress, txn: txn, id: id, isDurable: true, round: round)
            ledger.counters[counterAddress] = .init(id: id, round: round)
            ledger.note(txn)
        }
        var value = 0
        for i in 2... {
            let tag = "r\(round)-w\(writer)-\(i)"
            let params: String
            switch i % 3 {
            case 0:
                params = Self.insert(address: tag, durability: "disk")
            case 1:
                record { $0.attemptedBatches.insert(tag) }
                params = Self.batch(tag: tag)
            default:
                value += 1
                let sent = value
                record { $0.counters[counterAddress]?.sent = sent }
                params =
                    #"{"update":[{"id":"\#(id)","values":{"name":"k-\#(value)"}}],"durability":"disk","author":"\#(tag)"}"#
            }
            guard let answer = try? connection.call(i, "store.save", params) else { return }
            guard let txn = answer["result"]?["txn"]?.intValue else {
                record { $0.violations.append("round \(round): save \(tag) was refused: \(answer)") }
                return
            }
            let insertedID = answer["result"]?["ids"]?["d"]?.stringValue
            let acknowledgedValue = value
            record { ledger in
                ledger.note(txn)
                switch i % 3 {
                case 0, 1:
                    if i % 3 == 1 { ledger.acknowledgedBatches.insert(tag) }
                    ledger.inserts[tag] = .init(
                        tag: tag, txn: txn, id: insertedID ?? "?", isDurable: true, round: round)
                default:
                    ledger.counters[counterAddress]?.acknowledged = acknowledgedValue
                    ledger.counters[counterAddress]?.acknowledgedTxn = txn
                    ledger.counters[counterAddress]?.updates.append((acknowledgedValue, txn))
                }
            }
        }
    }

    private func writeMemorySaves(_ socketPath: String) {
        guard let connection = connect(socketPath) else { return }
        for i in 1... {
            let tag = "m\(round)-\(i)"
            guard let answer = try? connection.call(i, "store.save", Self.insert(address: tag, durability: "memory"))
            else { return }
            guard let txn = answer["result"]?["txn"]?.intValue, let id = answer["result"]?["ids"]?["d"]?.stringValue
            else {
                record { $0.violations.append("round \(round): memory save \(tag) was refused: \(answer)") }
                return
            }
            record { ledger in
                ledger.note(txn)
                ledger.memorySavesAcknowledged += 1
                ledger.inserts[tag] = .init(tag: tag, txn: txn, id: id, isDurable: false, round: round)
            }
        }
    }

    /// Runs recording chains of `address` until one is not recorded (the store died under it: devicesvc lives on).
    private func recordChains(_ deviceSocket: String, _ address: String) {
        guard let connection = connect(deviceSocket) else { return }
        for i in 1... {
            guard let answer = try? connection.call(i, "device.run", RecordingDeviceService.chain(address)) else {
                return
            }
            // A chain that failed carries `recorded` in its error's data.
            let result = answer["result"] ?? answer["error"]?["data"]
            guard let chain = result?["chain"]?.stringValue, let recorded = result?["recorded"] else {
                record { $0.violations.append("round \(round): a recording chain answered \(answer)") }
                return
            }
            guard recorded == .bool(true) else {
                record { $0.unrecordedChains += 1 }
                return
            }
            // One reading per value read (a failed chain records those it read before it failed).
            let readings = (result?["results"]?.arrayValue ?? []).filter { $0["value"] != nil }.count
            record { $0.recordedChains[chain] = readings }
        }
    }

    // MARK: - Readers and backups

    private func fetch(_ socketPath: String) {
        guard let connection = connect(socketPath) else { return }
        for i in 1... {
            let params =
                i % 2 == 0
                ? #"{"entity":"Reading","where":"chain BEGINSWITH $prefix","args":{"prefix":"r"},"result":"count"}"#
                : #"{"entity":"Device","limit":5,"sort":[{"key":"address","ascending":false}]}"#
            guard let answer = try? connection.call(i, "store.fetch", params) else { return }
            guard let txn = answer["result"]?["txn"]?.intValue else {
                record { $0.violations.append("round \(round): a fetch failed: \(answer)") }
                return
            }
            record { ledger in
                ledger.fetchTxns.append(txn)
                ledger.note(txn)
            }
        }
    }

    /// Subscribes with `since`; when the history no longer reaches back to it (`410`: a round committed more than
    /// `--history` keeps), from the oldest transaction it has, which becomes the `since` the checks replay from.
    private func subscribe(_ socketPath: String, since: Int64) {
        guard let connection = connect(socketPath) else { return }
        var since = since
        func send(_ id: Int) -> Bool {
            (try? connection.writeFrame(
                #"{"jsonrpc":"2.0","id":\#(id),"method":"store.subscribe","params":{"since":\#(since)}}"#)) != nil
        }
        var attempt = 1
        guard send(attempt) else { return }
        while let message = try? connection.readMessage() {
            if message["id"] != nil {
                // Pruning may move the oldest on again before the next attempt arrives: then once more.
                if message["error"]?["code"]?.intValue == 410, message["id"] == .int(Int64(attempt)), attempt < 100,
                    let oldest = message["error"]?["data"]?["oldest"]?.intValue
                {
                    since = oldest - 1
                    record { $0.subscriberSince = oldest - 1 }
                    attempt += 1
                    guard send(attempt) else { return }
                    continue
                }
                if message["result"]?["subscription"] == nil {
                    record { $0.violations.append("round \(round): subscribe since \(since) failed: \(message)") }
                    return
                }
                record { $0.note(message["result"]?["txn"]?.intValue) }
                continue
            }
            guard message["method"] == .string("store.changed"), let txn = message["params"]?["txn"]?.intValue else {
                continue
            }
            record { ledger in
                ledger.subscriberTxns.append(txn)
                ledger.subscriberEventCount += 1
                ledger.note(txn)
            }
        }
    }

    private func takeBackups(_ socketPath: String) {
        guard let connection = connect(socketPath) else { return }
        for i in 1... {
            let path = "\(backupDirectory)/r\(round)-\(i).sqlite"
            guard let answer = try? connection.call(i, "store.backup", #"{"path":"\#(path)"}"#) else { return }
            guard let txn = answer["result"]?["txn"]?.intValue else {
                record { $0.violations.append("round \(round): backup \(path) failed: \(answer)") }
                return
            }
            record { ledger in
                ledger.backups.append(.init(path: path, txn: txn))
                ledger.note(txn)
            }
        }
    }

    // MARK: - Saves

    /// A `Device` whose address and name are `address`, with the address as the save's author.
    static func insert(address: String, durability: String) -> String {
        #"{"insert":[{"entity":"Device","ref":"d","values":{"address":"\#(address)","name":"v-\#(address)"}}],"#
            + #""durability":"\#(durability)","author":"\#(address)"}"#
    }

    /// One `Device` whose address is `tag` and `batchSize - 1` `Reading`s with `chain` = `tag`, in one durable save.
    static func batch(tag: String) -> String {
        let reading =
            #"{"entity":"Reading","values":{"characteristic":"2a19","value":"AQ==","#
            + #""time":"2026-01-01T00:00:00.000Z","chain":"\#(tag)","device":"d"}}"#
        let readings = Array(repeating: reading, count: batchSize - 1).joined(separator: ",")
        return #"{"insert":[{"entity":"Device","ref":"d","values":{"address":"\#(tag)","name":"v-\#(tag)"}},"#
            + #"\#(readings)],"durability":"disk","author":"\#(tag)"}"#
    }
}
