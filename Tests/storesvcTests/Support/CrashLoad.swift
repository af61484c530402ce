import Foundation
@preconcurrency import Glibc

@testable import ContextBusSupport

/// What the clients of a crash test were told, kept across rounds and checked after every restart.
struct CrashLedger: Sendable {
    /// Addresses of single-object durable saves that were acknowledged.
    var acknowledgedDevices: Set<String> = []
    /// Tags of every multi-object save that was sent (acknowledged or not).
    var attemptedBatches: Set<String> = []
    /// Tags of the multi-object saves that were acknowledged.
    var acknowledgedBatches: Set<String> = []
    /// The highest txn any answer or event named.
    var highestTxn: Int64 = 0
    /// The `since` the last round's subscriber asked for.
    var subscriberSince: Int64 = 0
    /// The txns of the `store.changed` events the last round's subscriber received, in order.
    var subscriberTxns: [Int64] = []
    /// The txns at which fetches of the last round answered, per fetching connection, in order.
    var fetchTxns: [Int64] = []
    /// How many `store.changed` events the subscribers received over every round.
    var subscriberEventCount = 0
    /// Broken invariants, as sentences.
    var violations: [String] = []

    /// The `since` for the next subscriber: the last txn the previous one saw.
    var nextSubscriberSince: Int64 { subscriberTxns.last ?? subscriberSince }
}

/// The mixed load of one crash round: writers making 1-object and multi-object durable saves, a fetcher, and a
/// subscriber resuming from `since`; each on a thread of its own with a blocking connection, recording into a
/// shared ledger until the service dies under them.
final class CrashLoad: Sendable {
    /// Objects per multi-object save: one `Device` and `batchSize - 1` `Reading`s pointing at it.
    static let batchSize = 4

    let round: Int
    let ledger: Locked<CrashLedger>
    private let group = DispatchGroup()

    init(round: Int, ledger: Locked<CrashLedger>) {
        self.round = round
        self.ledger = ledger
    }

    /// Starts `writers` writers, one fetcher and one subscriber against `socketPath`.
    func start(socketPath: String, writers: Int) {
        let since = ledger.withLock { ledger in
            ledger.subscriberSince = ledger.nextSubscriberSince
            ledger.subscriberTxns = []
            ledger.fetchTxns = []
            return ledger.subscriberSince
        }
        detach { self.subscribe(socketPath, since: since) }
        detach { self.fetch(socketPath) }
        for writer in 0..<writers { detach { self.write(socketPath, writer: writer) } }
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

    private func record(_ update: (inout CrashLedger) -> Void) {
        ledger.withLock { update(&$0) }
    }

    private func noteTxn(_ txn: Int64?) {
        guard let txn else { return }
        record { $0.highestTxn = max($0.highestTxn, txn) }
    }

    // MARK: - Clients

    private func write(_ socketPath: String, writer: Int) {
        guard let connection = try? RawBusConnection(path: socketPath), (try? connection.hello()) != nil else { return }
        for i in 1... {
            let name = "r\(round)-w\(writer)-\(i)"
            let isBatch = i % 2 == 0
            if isBatch { record { $0.attemptedBatches.insert(name) } }
            let params = isBatch ? Self.batchSave(tag: name) : Self.singleSave(address: name)
            guard let answer = try? connection.call(i, "store.save", params) else { return }
            guard let txn = answer["result"]?["txn"]?.intValue else {
                record { $0.violations.append("round \(round): save \(name) was refused: \(answer)") }
                return
            }
            record { ledger in
                if isBatch { ledger.acknowledgedBatches.insert(name) } else { ledger.acknowledgedDevices.insert(name) }
                ledger.highestTxn = max(ledger.highestTxn, txn)
            }
        }
    }

    private func fetch(_ socketPath: String) {
        guard let connection = try? RawBusConnection(path: socketPath), (try? connection.hello()) != nil else { return }
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
            record { $0.fetchTxns.append(txn) }
            noteTxn(txn)
        }
    }

    private func subscribe(_ socketPath: String, since: Int64) {
        guard let connection = try? RawBusConnection(path: socketPath), (try? connection.hello()) != nil,
            (try? connection.writeFrame(
                #"{"jsonrpc":"2.0","id":1,"method":"store.subscribe","params":{"since":\#(since)}}"#)) != nil
        else { return }
        while let message = try? connection.readMessage() {
            if message["id"] != nil {
                if message["result"]?["subscription"] == nil {
                    record { $0.violations.append("round \(round): subscribe since \(since) failed: \(message)") }
                    return
                }
                noteTxn(message["result"]?["txn"]?.intValue)
                continue
            }
            guard message["method"] == .string("store.changed"), let txn = message["params"]?["txn"]?.intValue else {
                continue
            }
            let inserted = message["params"]?["inserted"]?.arrayValue?.count ?? 0
            record { ledger in
                if inserted != 1, inserted != Self.batchSize {
                    ledger.violations.append("round \(round): txn \(txn)'s event inserted \(inserted) objects")
                }
                ledger.subscriberTxns.append(txn)
                ledger.subscriberEventCount += 1
                ledger.highestTxn = max(ledger.highestTxn, txn)
            }
        }
    }

    // MARK: - Saves

    static func singleSave(address: String) -> String {
        #"{"insert":[{"entity":"Device","values":{"address":"\#(address)"}}],"durability":"disk"}"#
    }

    /// One `Device` whose address is `tag` and `batchSize - 1` `Reading`s with `chain` = `tag`, in one save.
    static func batchSave(tag: String) -> String {
        let reading =
            #"{"entity":"Reading","values":{"characteristic":"2a19","value":"AQ==","#
            + #""time":"2026-01-01T00:00:00.000Z","chain":"\#(tag)","device":"d"}}"#
        let readings = Array(repeating: reading, count: batchSize - 1).joined(separator: ",")
        return #"{"insert":[{"entity":"Device","ref":"d","values":{"address":"\#(tag)"}},\#(readings)],"#
            + #""durability":"disk","author":"\#(tag)"}"#
    }
}
