import ContextBusClient
import ContextBusServer
import ContextBusSupport
import Dispatch
import Foundation

/// Publishes this gateway's committed transactions from its store's history (the outbox), in `txn` order, each
/// with the message ID `<gateway>:<txn>`; records the published position in the store only after JetStream has
/// acknowledged (docs/fleet.md, "Outbound"). Transactions authored `fleet:*` (applied from others) are passed
/// over, never published again. Runs on a thread of its own.
final class Outbound: Sendable {
    private let configuration: FleetServiceConfiguration
    private let store: StoreLink
    private let jetStream: JetStream
    private let counters: FleetCounters
    private let log: ServiceLog
    private let doorbell = DispatchSemaphore(value: 0)
    private let stopping = AtomicFlag()
    private let stopped = DispatchSemaphore(value: 0)
    /// `CTXBUS_FLEET_FAULT=exit-after-ack:<txn>` kills the process (SIGKILL) right after JetStream acknowledged
    /// that transaction, before its position is recorded (the fault tests).
    private let crashAfterAck: Int64?
    /// `CTXBUS_FLEET_FAULT=lose-publication:<txn>` sends that transaction's first publication where no stream
    /// captures it (JetStream answers "no responders"), as if it were lost on the way (the fault tests).
    private let lostPublication: Int64?
    private let isLostPublicationSent = AtomicFlag()

    init(
        configuration: FleetServiceConfiguration, store: StoreLink, jetStream: JetStream, counters: FleetCounters,
        log: ServiceLog, environment: [String: String]
    ) {
        self.configuration = configuration
        self.store = store
        self.jetStream = jetStream
        self.counters = counters
        self.log = log
        let fault = environment["CTXBUS_FLEET_FAULT"] ?? ""
        crashAfterAck = fault.hasPrefix("exit-after-ack:") ? Int64(fault.dropFirst("exit-after-ack:".count)) : nil
        lostPublication =
            fault.hasPrefix("lose-publication:") ? Int64(fault.dropFirst("lose-publication:".count)) : nil
    }

    /// Wakes the loop (a `store.changed` event: something was committed).
    func ring() { doorbell.signal() }

    func start(from published: Int64) {
        let thread = Thread { [self] in
            run(from: published)
            stopped.signal()
        }
        thread.name = "fleetsvc.outbound"
        thread.start()
    }

    func stop() {
        guard stopping.setOnce() else { return }
        doorbell.signal()
        stopped.wait()
    }

    private func run(from start: Int64) {
        var published = start
        var recorded = start
        var previous: Int64 = 0
        var lastRecord = ContinuousClock.now
        let subject = configuration.transactionSubject(of: configuration.gateway)
        while !stopping.isSet {
            let page: JSONValue
            do {
                page = try store.call("store.replicaChanges", .object(["since": .int(published), "limit": .int(256)]))
            } catch {
                log.debug("outbound: reading the history: \(error)")
                _ = doorbell.wait(timeout: .now() + .milliseconds(200))
                continue
            }
            let transactions = page.objectValue?["transactions"]?.arrayValue ?? []
            let fleetIDs = page.objectValue?["fleetIDs"]?.objectValue ?? [:]
            if let lastTxn = page.objectValue?["lastTxn"]?.intValue {
                counters.update { $0.lastTxn = max($0.lastTxn, lastTxn) }
            }
            if transactions.isEmpty {
                if recorded < published { recorded = record(published, recorded: recorded) }
                // The store gives only what a sync made durable (docs/fleet.md, "Only what a power cut keeps"); the
                // rest follows its sync, which this call asked for and no commit event announces: look again soon.
                let isHeldBack =
                    page.objectValue?["lastTxn"]?.intValue ?? 0 > page.objectValue?["durable"]?.intValue ?? .max
                if isHeldBack {
                    CurrentThread.sleep(nanoseconds: Int64(20) * 1_000_000)
                } else {
                    _ = doorbell.wait(timeout: .now() + .milliseconds(500))
                }
                continue
            }
            for transaction in transactions {
                guard let members = transaction.objectValue, let txn = members["txn"]?.intValue else { continue }
                let author = members["author"]?.stringValue
                // Passed over: what this gateway applied from others (no echo). Empty transactions (those a
                // storesvc that restarts after a crash writes for the txns it may have handed out) are published:
                // the other gateways' `applied` then reaches this gateway's last transaction.
                if author?.hasPrefix("fleet:") != true {
                    let message = self.message(
                        from: members, txn: txn, previous: previous, fleetIDs: fleetIDs, author: author)
                    // One at a time, each acknowledged before the next is sent: the stream then holds this gateway's
                    // transactions in `txn` order whatever fails in between (a page published at once could lose
                    // one message and store a later one, and publishing the lost one again would store it after
                    // the later one, where every receiver takes it for a redelivery).
                    guard publish(message, subject: subject) else { return }
                    if crashAfterAck == txn { killThisProcess() }
                    previous = txn
                }
                published = txn
                counters.update { $0.published = published }
            }
            // Recorded at most every 100 ms while busy (a small transaction of the store's writer each time), and
            // as soon as there is nothing more to publish.
            if ContinuousClock.now - lastRecord >= .milliseconds(100) {
                recorded = record(published, recorded: recorded)
                lastRecord = ContinuousClock.now
            }
        }
    }

    /// Where `message` is published: `subject`, except for the first publication of the fault point's transaction.
    private func subject(of message: FleetMessage, _ subject: String) -> String {
        guard message.txn == lostPublication, isLostPublicationSent.setOnce() else { return subject }
        log.info("outbound: fault point: publishing \(message.messageID) where no stream captures it")
        return "ctxbus.\(configuration.fleet).\(configuration.gateway).lost"
    }

    /// Publishes until JetStream acknowledges (or the bridge stops: `false`).
    private func publish(_ message: FleetMessage, subject: String) -> Bool {
        let bytes = message.bytes
        var attempt = 0
        while !stopping.isSet {
            do {
                let ack = try jetStream.publish(
                    subject: self.subject(of: message, subject), data: bytes, messageID: message.messageID,
                    stream: configuration.streamName)
                counters.update { $0.publications += 1 }
                if ack.isDuplicate { log.debug("outbound: \(message.messageID) was in the stream already") }
                return true
            } catch {
                attempt += 1
                if attempt == 1 || attempt % 50 == 0 {
                    log.warning("outbound: publishing \(message.messageID): \(error)")
                }
                _ = doorbell.wait(timeout: .now() + .milliseconds(min(100 * attempt, 1_000)))
            }
        }
        return false
    }

    /// Records `published` in the store (after JetStream's acks); returns what is recorded now.
    private func record(_ published: Int64, recorded: Int64) -> Int64 {
        do {
            _ = try store.call("store.replica", .object(["published": .int(published)]))
            return published
        } catch {
            log.debug("outbound: recording the published position: \(error)")
            return recorded
        }
    }

    /// The message of one committed transaction (a `store.replicaChanges` entry).
    private func message(
        from members: [String: JSONValue], txn: Int64, previous: Int64, fleetIDs: [String: JSONValue], author: String?
    ) -> FleetMessage {
        let gateway = configuration.gateway
        let model = store.model
        func fleetID(_ local: String) -> String { fleetIDs[local]?.stringValue ?? "\(gateway):\(local)" }
        func values(_ values: [String: JSONValue], entity: String, keys: Set<String>?) -> [String: JSONValue] {
            guard let description = model.entity(named: entity) else { return [:] }
            var result: [String: JSONValue] = [:]
            for (key, value) in values where keys?.contains(key) ?? true {
                if description.attribute(named: key) != nil {
                    result[key] = value
                } else if let relationship = description.relationship(named: key), !relationship.isToMany {
                    result[key] = value.stringValue.map { .string(fleetID($0)) } ?? .null
                }
            }
            return result
        }
        func entity(of id: String) -> String { String(id.prefix { $0 != "/" }) }
        var inserted: [FleetMessage.Object] = []
        for object in members["inserted"]?.arrayValue ?? [] {
            guard let id = object.objectValue?["id"]?.stringValue else { continue }
            inserted.append(
                .init(
                    id: fleetID(id), entity: entity(of: id),
                    values: values(object.objectValue?["values"]?.objectValue ?? [:], entity: entity(of: id), keys: nil)
                ))
        }
        var updated: [FleetMessage.Object] = []
        for object in members["updated"]?.arrayValue ?? [] {
            guard let fields = object.objectValue, let id = fields["id"]?.stringValue else { continue }
            let changed = Set(fields["changed"]?.arrayValue?.compactMap(\.stringValue) ?? [])
            let kept = values(fields["values"]?.objectValue ?? [:], entity: entity(of: id), keys: changed)
            if !kept.isEmpty { updated.append(.init(id: fleetID(id), entity: entity(of: id), values: kept)) }
        }
        let deleted = (members["deleted"]?.arrayValue ?? []).compactMap { $0.objectValue?["id"]?.stringValue }.map(
            fleetID)
        return FleetMessage(
            gateway: gateway, txn: txn, previous: previous, clock: members["clock"]?.intValue ?? 0, author: author,
            inserted: inserted, updated: updated, deleted: deleted)
    }
}
