import ContextBusClient
import ContextBusServer
import ContextBusSupport
import Dispatch
import Foundation

/// Applies the other gateways' transactions to this gateway's store, in stream order, each as one save authored
/// `fleet:<gateway>` with its origin (gateway, txn, clock, stream position), which the store records in the same
/// SQLite transaction: a redelivery changes nothing (docs/fleet.md, "Inbound"). Runs on a thread of its own,
/// reading `ctxbus.<fleet>.*.txn` (a `StreamReader`) from after the position recorded in the store.
///
/// A message that is not a fleet message, or whose subject and gateway disagree, is refused: logged, counted,
/// passed over (the position moves past it; it stays in the stream). Objects and keys this gateway's model does
/// not have are left out and counted. A transaction whose changes the store refuses (a value that does not fit
/// the model, a unique key another object took) is recorded as applied with no changes, logged and counted.
final class Inbound: Sendable {
    private let configuration: FleetServiceConfiguration
    private let store: StoreLink
    private let jetStream: JetStream
    private let counters: FleetCounters
    private let log: ServiceLog
    private let stopping = AtomicFlag()
    private let stopped = DispatchSemaphore(value: 0)
    /// Fleet-wide ID → local ID, as the store maps them (a mapping never changes once made: a deleted object keeps
    /// its row), learnt from lookups and from the answers to applied saves.
    private let knownIDs = Locked<[String: String]>([:])
    /// `CTXBUS_FLEET_FAULT=exit-before-apply:<gateway>:<txn>` kills the process just before that save is sent.
    private let crashBeforeApply: String?

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
        crashBeforeApply =
            fault.hasPrefix("exit-before-apply:") ? String(fault.dropFirst("exit-before-apply:".count)) : nil
    }

    func start(state: ReplicaState) {
        let thread = Thread { [self] in
            run(state: state)
            stopped.signal()
        }
        thread.name = "fleetsvc.inbound"
        thread.start()
    }

    func stop() {
        guard stopping.setOnce() else { return }
        stopped.wait()
    }

    private struct Progress {
        var applied: [String: Int64]
        /// The last stream position read, and the last one recorded in the store.
        var position: Int64
        var recordedPosition: Int64
        /// Gaps already refetched from the stream's start, per gateway and txn.
        var refetched: Set<String> = []
    }

    private func run(state: ReplicaState) {
        var progress = Progress(
            applied: state.applied.mapValues(\.txn),
            position: max(state.position, state.applied.values.map(\.position).max() ?? 0),
            recordedPosition: state.position)
        counters.update { $0.applied = progress.applied }
        let stream = StreamFollower(
            jetStream: jetStream, subject: configuration.allTransactionsSubject, position: progress.position, log: log)
        let pending = PendingApplies()
        var idleSince = ContinuousClock.now
        while !stopping.isSet {
            let messages = stream.next(batch: Self.window, timeoutMilliseconds: pending.isEmpty ? 500 : 5)
            counters.update {
                $0.state = stream.isReading ? "following" : "connecting"
                $0.streamPending = stream.pending
            }
            if messages.isEmpty {
                if !pending.isEmpty {
                    // Nothing new: learn what is answered, or wait for all when something failed.
                    absorbAnswered(pending)
                } else if progress.recordedPosition < progress.position,
                    ContinuousClock.now - idleSince > .milliseconds(200)
                {
                    recordPosition(&progress)
                }
                continue
            }
            idleSince = ContinuousClock.now
            for message in messages {
                if handle(message, progress: &progress, pending: pending) == .refetch {
                    settle(pending)
                    progress.position = 0
                    stream.restart(from: 0)
                    break
                }
                progress.position = Int64(message.sequence)
            }
        }
        settle(pending)
        stream.close()
        if progress.recordedPosition < progress.position { recordPosition(&progress) }
    }

    private func recordPosition(_ progress: inout Progress) {
        if (try? store.call("store.replica", .object(["position": .int(progress.position)]))) != nil {
            progress.recordedPosition = progress.position
        }
    }

    private enum Outcome { case done, refetch }

    /// The most saves in flight at once.
    static let window = 128

    private func handle(_ message: StreamMessage, progress: inout Progress, pending: PendingApplies) -> Outcome {
        let parts = message.subject.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "ctxbus", parts[1] == configuration.fleet, parts[3] == "txn" else {
            refuse(message, "not a transaction subject of fleet \(configuration.fleet)")
            return .done
        }
        let subjectGateway = String(parts[2])
        let decoded: FleetMessage
        do {
            decoded = try FleetMessage(bytes: message.data)
        } catch {
            refuse(message, "\(error)")
            return .done
        }
        guard decoded.gateway == subjectGateway else {
            refuse(message, "gateway '\(decoded.gateway)' published on the subject of '\(subjectGateway)'")
            return .done
        }
        if decoded.gateway == configuration.gateway { return .done }  // our own, read back
        let applied = progress.applied[decoded.gateway] ?? 0
        if decoded.txn <= applied { return .done }  // applied before (a redelivery)
        if decoded.previous > applied {
            let key = "\(decoded.gateway):\(decoded.txn)"
            if !progress.refetched.contains(key) {
                progress.refetched.insert(key)
                counters.update { $0.gaps += 1 }
                log.warning(
                    "inbound: \(decoded.gateway) txn \(decoded.txn) follows \(decoded.previous), but \(applied) is the "
                        + "last applied here: reading the stream again from its start")
                return .refetch
            }
            log.error(
                "inbound: transactions \(applied + 1)…\(decoded.previous) of \(decoded.gateway) are no longer in the "
                    + "stream; applying \(decoded.txn) without them")
        }
        if crashBeforeApply == "\(decoded.gateway):\(decoded.txn)" {
            settle(pending)
            killThisProcess()
        }
        // A message naming an object that a save in flight inserts waits for it (its local ID comes back in the
        // answer); so does one when the window is full.
        if pending.count >= Self.window || pending.introducesAny(of: namedFleetIDs(in: decoded)) { settle(pending) }
        let params = saveParams(for: decoded, position: Int64(message.sequence))
        counters.update { $0.applying += 1 }
        pending.send(
            .init(
                message: decoded, params: params, position: Int64(message.sequence),
                inserted: Set(decoded.inserted.map(\.id))), on: store.client)
        // Sent: a redelivery is passed over from now on. `fleet.status`' `applied` moves once the save committed.
        progress.applied[decoded.gateway] = decoded.txn
        progress.recordedPosition = max(progress.recordedPosition, Int64(message.sequence))
        return .done
    }

    private func refuse(_ message: StreamMessage, _ why: String) {
        log.warning("inbound: refused message \(message.sequence) on \(message.subject): \(why)")
        counters.update { $0.refused += 1 }
    }

    // MARK: - Applying

    /// The fleet-wide IDs a message names besides its inserts (objects it updates, deletes or points at).
    private func namedFleetIDs(in message: FleetMessage) -> Set<String> {
        var named = Set(message.deleted)
        for object in message.updated { named.insert(object.id) }
        for object in message.inserted + message.updated {
            for value in object.values.values { if let id = value.stringValue, id.contains(":") { named.insert(id) } }
        }
        return named
    }

    /// Learns the local IDs of the answered saves at the front; on a failure among them, settles everything.
    private func absorbAnswered(_ pending: PendingApplies) {
        let answered = pending.takeAnswered()
        for (index, (entry, outcome)) in answered.enumerated() {
            guard case .success(let answer) = outcome else {
                // Everything from the failure on is applied again in order (a committed one changes nothing).
                for (later, _) in answered[index...] {
                    apply(later.message, params: later.params, position: later.position)
                }
                settle(pending, afterFailure: true)
                return
            }
            committed(entry.message, answer: answer, params: entry.params)
        }
    }

    /// Waits for the answers of the saves in flight; in order, learns the local IDs of their inserts, and applies
    /// again (one by one, until the store answers) those that failed.
    private func settle(_ pending: PendingApplies, afterFailure: Bool = false) {
        guard !pending.isEmpty else { return }
        var failedBefore = afterFailure
        for (entry, outcome) in pending.takeAll() {
            switch outcome {
            case .success(let answer) where !failedBefore:
                committed(entry.message, answer: answer, params: entry.params)
            default:
                // Everything after a failure is applied again in order (a committed one changes nothing).
                failedBefore = true
                apply(entry.message, params: entry.params, position: entry.position)
            }
        }
    }

    /// The save of `message` committed (or changed nothing, a redelivery): learns its inserts' local IDs and moves
    /// `applied`.
    private func committed(_ message: FleetMessage, answer: JSONValue, params: JSONValue) {
        learnIDs(from: answer, params: params)
        counters.update {
            $0.applied[message.gateway] = max($0.applied[message.gateway] ?? 0, message.txn)
            $0.applying -= 1
        }
    }

    private func learnIDs(from answer: JSONValue, params: JSONValue) {
        let fleetIDs = params.objectValue?["origin"]?.objectValue?["fleetIDs"]?.objectValue ?? [:]
        let ids = answer.objectValue?["ids"]?.objectValue ?? [:]
        knownIDs.withLock { known in
            for (ref, fleetID) in fleetIDs {
                if let fleetID = fleetID.stringValue, let local = ids[ref]?.stringValue { known[fleetID] = local }
            }
        }
    }

    /// Saves `message` until the store answers (retrying while it is away); a save the store refuses is recorded
    /// as applied with no changes.
    private func apply(_ message: FleetMessage, params first: JSONValue, position: Int64) {
        var params = first
        var attempt = 0
        while !stopping.isSet {
            do {
                let answer = try store.call("store.save", params)
                committed(message, answer: answer, params: params)
                return
            } catch let error as RPCError where [409, 404, 422, -32602].contains(error.code) {
                log.warning("inbound: \(message.messageID) refused by the store (\(error)); applied as nothing")
                counters.update { $0.rejected += 1 }
                params = .object([
                    "author": .string("fleet:\(message.gateway)"), "origin": originJSON(message, position, [:]),
                ])
            } catch {
                attempt += 1
                if attempt == 1 || attempt % 50 == 0 { log.warning("inbound: applying \(message.messageID): \(error)") }
                CurrentThread.sleep(nanoseconds: Int64(min(50 * attempt, 1_000)) * 1_000_000)
            }
        }
    }

    private func originJSON(_ message: FleetMessage, _ position: Int64, _ fleetIDs: [String: JSONValue]) -> JSONValue {
        .object([
            "gateway": .string(message.gateway), "txn": .int(message.txn), "clock": .int(message.clock),
            "position": .int(position), "fleetIDs": .object(fleetIDs),
        ])
    }

    /// `store.save`'s params for `message`: inserts named by refs with their fleet-wide IDs in `origin`, other
    /// objects by the local IDs the store maps their fleet-wide IDs to (this gateway's own: their local part).
    private func saveParams(for message: FleetMessage, position: Int64) -> JSONValue {
        let model = store.model
        let own = configuration.gateway
        var refs: [String: String] = [:]  // fleet ID of an insert → its ref
        for (i, object) in message.inserted.enumerated() { refs[object.id] = "i\(i)" }
        // Fleet-wide IDs to look up: everything named that is neither ours nor inserted by this message.
        var wanted = Set<String>()
        func note(_ fleetID: String) {
            guard refs[fleetID] == nil, FleetMessage.localPart(of: fleetID)?.gateway != own else { return }
            wanted.insert(fleetID)
        }
        for object in message.inserted + message.updated {
            for value in object.values.values { if let id = value.stringValue, id.contains(":") { note(id) } }
        }
        for object in message.updated { note(object.id) }
        for id in message.deleted { note(id) }
        var known: [String: String] = knownIDs.withLock { cached in
            var found: [String: String] = [:]
            for fleetID in wanted { if let local = cached[fleetID] { found[fleetID] = local } }
            return found
        }
        wanted.subtract(known.keys)
        if !wanted.isEmpty,
            let answer = try? store.call(
                "store.replicaIDs", .object(["fleetIDs": .array(wanted.map(JSONValue.string))]))
        {
            for (fleet, local) in answer.objectValue?["ids"]?.objectValue ?? [:] { known[fleet] = local.stringValue }
            knownIDs.withLock { cached in cached.merge(known) { current, _ in current } }
        }
        func local(_ fleetID: String) -> String? {
            guard let parts = FleetMessage.localPart(of: fleetID) else { return nil }
            return parts.gateway == own ? parts.id : known[fleetID]
        }
        var unknown: Int64 = 0
        func values(_ values: [String: JSONValue], entity: EntityDescription) -> [String: JSONValue] {
            var result: [String: JSONValue] = [:]
            for (key, value) in values {
                if entity.attribute(named: key) != nil {
                    result[key] = value
                } else if let relationship = entity.relationship(named: key), !relationship.isToMany {
                    guard let target = value.stringValue else {
                        result[key] = .null
                        continue
                    }
                    if let ref = refs[target] {
                        result[key] = .object(["ref": .string(ref)])
                    } else if let id = local(target) {
                        result[key] = .string(id)
                    }
                } else {
                    unknown += 1
                }
            }
            return result
        }
        var inserts: [JSONValue] = []
        var fleetIDs: [String: JSONValue] = [:]
        for object in message.inserted {
            guard let entity = model.entity(named: object.entity) else {
                unknown += 1
                continue
            }
            let ref = refs[object.id]!
            fleetIDs[ref] = .string(object.id)
            inserts.append(
                .object([
                    "entity": .string(object.entity), "ref": .string(ref),
                    "values": .object(values(object.values, entity: entity)),
                ]))
        }
        var updates: [JSONValue] = []
        for object in message.updated {
            guard let entity = model.entity(named: object.entity) else {
                unknown += 1
                continue
            }
            guard let id = local(object.id) else { continue }  // never seen here: deleted before it reached us
            let kept = values(object.values, entity: entity)
            if !kept.isEmpty { updates.append(.object(["id": .string(id), "values": .object(kept)])) }
        }
        var deletes: [JSONValue] = []
        for fleetID in message.deleted {
            guard let entity = FleetMessage.localPart(of: fleetID)?.entity, model.entity(named: entity) != nil else {
                unknown += 1
                continue
            }
            if let id = local(fleetID) { deletes.append(.object(["id": .string(id)])) }
        }
        if unknown > 0 {
            log.info("inbound: \(message.messageID): \(unknown) object(s) or key(s) this model does not have, left out")
            counters.update { $0.unknown += unknown }
        }
        return .object([
            "insert": .array(inserts), "update": .array(updates), "delete": .array(deletes),
            "mergePolicy": .string("objectTrump"), "author": .string("fleet:\(message.gateway)"),
            // Without an fsync of its own: the save and its origin commit together, so a power loss loses both
            // and the stream (which keeps the message) gives it again; a process crash loses neither.
            "durability": .string("memory"), "origin": originJSON(message, position, fleetIDs),
        ])
    }
}
