import ContextBusObjectGraph
import ContextBusServer
import ContextBusSupport
import ContextBusWire
import Dispatch

/// The store's subscription table: turns every committed `ChangeSet` into `store.changed`
/// events for the subscriptions whose set it changes, and replays history for `since`.
///
/// ```
///  store writer ──commit──▶ observer queue ──▶ hub.deliver(changes)
///                                               ├─ filter F: event built and encoded once ─┬─▶ A's connection (A's number spliced in)
///                                               │                                          └─▶ B's connection (bounded, never blocks)
///                                               ├─ filter G: …
///                                               └─ replaying C: skipped; C's replay reads it from the history
/// ```
///
/// A subscription goes through three phases:
///
/// 1. **pending** (`subscribe`): registered and checked, its result not yet sent. Nothing is
///    delivered to it.
/// 2. **replaying** (`activate`, once the result is queued): it reads the store's history after
///    `processedThrough` page by page, sends each page's events paced by the connection
///    (`sendWhenWritable`), and advances `processedThrough`. When a page comes back empty and
///    `processedThrough` has caught up with the last transaction the hub has seen, it turns
///    live, under the hub's lock.
/// 3. **live**: `deliver` sends it the events of each later transaction.
///
/// Why there is no gap and no duplicate: the live path only serves live subscriptions, and only
/// transactions after their `processedThrough`, which it advances; the switch to live happens
/// under the same lock that `deliver` takes to read the live list and to record the hub's last
/// seen transaction, and only when the replay has covered everything up to that transaction.
/// Every transaction is therefore sent by exactly one of the two paths, in `txn` order (the
/// replay finishes queueing before the switch).
///
/// A subscriber that disappears (its connection closed or was dropped for overflow: `send`
/// returns `false`) is forgotten; so are all of a connection's subscriptions when it closes
/// (`connectionClosed`).
final class SubscriptionHub: Sendable {
    enum Phase: Sendable, Equatable {
        case pending, replaying, live
    }

    struct Record: Sendable {
        let filter: SubscriptionFilter
        let connection: any SubscriberConnection
        var phase: Phase
        /// Every transaction up to this one has been handled (sent or found irrelevant).
        var processedThrough: Int64
    }

    struct State: Sendable {
        var subscriptions: [Int64: Record] = [:] {
            didSet { liveGroups = nil }
        }
        /// The live subscriptions grouped by filter, as `deliver` uses them; rebuilt after any change to
        /// `subscriptions` (`nil` until then).
        var liveGroups: [LiveGroup]?
        var nextID: Int64 = 0
        /// The last transaction `deliver` was called with.
        var lastSeen: Int64
        var eventsSent: Int64 = 0
        var subscribersDropped: Int64 = 0
    }

    /// Transactions read from the history per replay step.
    let replayPageSize: Int
    let store: any PersistentStore
    let model: Model
    let log: ServiceLog
    let state: Locked<State>
    /// Sends the live events to bus connections, from their loops.
    private let fanOut: FrameFanOut
    private let observation: Locked<StoreObservation?> = Locked(nil)
    /// The transactions after the one being delivered that `deliver` has read from the history to tell to-many
    /// arrays as of that one (`completingToMany`); used on the store's observer queue only.
    private let liveTimeline: Locked<ToManyTimeline>
    let replayQueue = DispatchQueue(label: "ContextBus.storesvc.replay", attributes: .concurrent)

    /// Makes a hub for `store` and starts observing its commits.
    init(store: any PersistentStore, log: ServiceLog, replayPageSize: Int = 256) {
        self.store = store
        self.model = store.model
        self.log = log
        self.replayPageSize = replayPageSize
        let state = Locked(State(lastSeen: store.lastTransaction))
        liveTimeline = Locked(ToManyTimeline(model: store.model))
        self.state = state
        fanOut = FrameFanOut(method: ChangedEvent.method) { refused in
            SubscriptionHub.forget(refused.map(\.number), countedAsSent: true, in: state)
        }
        let observation = store.observeChanges { [weak self] changes in self?.deliver(changes) }
        self.observation.withLock { $0 = observation }
    }

    /// Stops observing the store.
    func stop() {
        let observation = self.observation.withLock { current in
            defer { current = nil }
            return current
        }
        observation?.cancel()
    }

    // MARK: - Subscribing

    /// Registers a pending subscription; call `activate(_:)` once its result has been queued.
    ///
    /// Without `since` the subscription starts after the last committed transaction, which the
    /// result's `txn` names. With `since`, every transaction after `since` is replayed first;
    /// `txn` still names the last committed transaction when the subscription was made.
    ///
    /// - Throws: `-32602` for a bad `entity`, `where` or `args`; `410` when the history no
    ///   longer reaches back to `since`.
    func subscribe(
        _ params: SubscribeParams, connection: any SubscriberConnection
    ) throws(RPCError) -> SubscribeResult {
        let filter = try SubscriptionFilter(
            entity: params.entity, predicate: params.predicate, arguments: params.arguments, toMany: params.toMany,
            model: model)
        let current = store.lastTransaction
        if let since = params.since, since < current {
            do {
                _ = try store.history(since: since, limit: 1)
            } catch {
                throw StoreErrorMapping.rpcError(for: error, log: log)
            }
        }
        let start = params.since ?? current
        let id = state.withLock { state in
            state.nextID += 1
            state.subscriptions[state.nextID] = Record(
                filter: filter, connection: connection, phase: .pending, processedThrough: start)
            return state.nextID
        }
        log.debug("subscription \(id) on connection \(connection.connectionID) from txn \(start)")
        return SubscribeResult(subscription: id, txn: current)
    }

    /// Starts delivering to a pending subscription: its replay (if it is behind), then live events.
    func activate(_ subscription: Int64) {
        let isActivated = state.withLock { state in
            guard state.subscriptions[subscription]?.phase == .pending else { return false }
            state.subscriptions[subscription]?.phase = .replaying
            return true
        }
        if isActivated { scheduleReplay(subscription) }
    }

    /// Ends a subscription of `connectionID`.
    ///
    /// - Throws: `404` when there is no such subscription on this connection.
    func unsubscribe(_ subscription: Int64, connectionID: UInt64) throws(RPCError) {
        let removed = state.withLock { state in
            guard state.subscriptions[subscription]?.connection.connectionID == connectionID else { return false }
            state.subscriptions[subscription] = nil
            return true
        }
        guard removed else {
            throw .notFound(
                "subscription \(subscription) does not exist on this connection",
                data: .object(["subscription": .int(subscription)]))
        }
    }

    /// Forgets every subscription of a closed connection.
    func connectionClosed(_ connectionID: UInt64) {
        state.withLock { state in
            state.subscriptions = state.subscriptions.filter { $0.value.connection.connectionID != connectionID }
        }
    }

    /// The number of subscriptions.
    var count: Int { state.withLock { $0.subscriptions.count } }

    /// Events sent, and subscriptions dropped because their connection went away.
    var counters: (eventsSent: Int64, subscribersDropped: Int64) {
        state.withLock { ($0.eventsSent, $0.subscribersDropped) }
    }

    /// The phase of a subscription (tests).
    func phase(of subscription: Int64) -> Phase? {
        state.withLock { $0.subscriptions[subscription]?.phase }
    }

    // MARK: - Live delivery

    /// Sends the events of one committed transaction to the live subscriptions (called by the
    /// store's observer queue, in `txn` order).
    ///
    /// Subscriptions with the same filter see the same event: it is built, filtered and encoded once
    /// per filter (`SubscriptionFilter.Key`), and each subscriber gets the shared bytes with its own
    /// `subscription` number spliced in (`ChangedEventFrame`). The live subscriptions are kept grouped by filter
    /// (`LiveGroup`, rebuilt only when subscriptions change), with their bus connections grouped by loop: this
    /// thread hands each loop the frame once (`FrameFanOut`), and the loops queue it for their connections and
    /// send each connection's queue with one system call.
    func deliver(_ changes: ChangeSet) {
        let groups = state.withLock { state -> [LiveGroup] in
            state.lastSeen = max(state.lastSeen, changes.txn)
            return state.currentLiveGroups()
        }
        guard !groups.isEmpty else { return }
        let filters = groups.map(\.filter)
        let toManyChanges = self.toManyChanges(of: changes, for: filters)
        let (changes, completionFailure) = completingLiveToMany(changes, for: filters)
        var lookup = ChangeLookup(changes: changes, store: store)
        var sent: Int64 = 0
        var gone: [Int64] = []
        var closed: [LiveGroup.Member] = []
        for group in groups {
            // A subscription that went live after this transaction (its replay covered it) is not sent it.
            let group = changes.txn > group.latestStart ? group : group.members(after: changes.txn)
            guard !group.isEmpty else { continue }
            if let completionFailure, needsToManyValues(of: changes, for: group.filter) {
                log.warning("txn \(changes.txn): \(completionFailure); closing \(group.members.count) subscriptions")
                closed += group.members
                continue
            }
            let change = EncodedChange(
                group.filter.event(
                    for: changes, subscription: 0, lookup: { lookup.values(of: $0) },
                    toManyChanges: { toManyChanges }))
            switch change {
            case .nothing:
                continue
            case .frame(let frame):
                // Counted before the hand-off: a refusal (which subtracts) can come back from a loop at once.
                let handedOff = Int64(group.busRecipients.count)
                if handedOff > 0 { state.withLock { $0.eventsSent += handedOff } }
                fanOut.send(frame.numbered, to: group.busRecipients)
                for member in group.others {
                    if member.connection.send(encodedEvent: frame.frame(for: member.id)) {
                        sent += 1
                    } else {
                        gone.append(member.id)
                    }
                }
            case .unencodable(var event):
                // Sent the plain way, which reports why it cannot be encoded (and fails).
                for member in group.members {
                    event.subscription = member.id
                    if member.connection.send(RPCEvent(event)) {
                        sent += 1
                    } else {
                        gone.append(member.id)
                    }
                }
            }
        }
        state.withLock { $0.eventsSent += sent }
        if !gone.isEmpty { Self.forget(gone, countedAsSent: false, in: state) }
        if !closed.isEmpty {
            Self.forget(closed.map(\.id), countedAsSent: false, in: state)
            for member in closed {
                member.connection.close(
                    because: "subscription \(member.id) cannot be sent txn \(changes.txn)'s to-many arrays")
            }
        }
    }

    /// Forgets subscriptions whose connection refused an event (closed, or dropped for overflow), counting them as
    /// dropped; `countedAsSent`: their refused events had been counted in `eventsSent`.
    static func forget(_ subscriptions: [Int64], countedAsSent: Bool, in state: Locked<State>) {
        state.withLock { state in
            if countedAsSent { state.eventsSent -= Int64(subscriptions.count) }
            for id in subscriptions where state.subscriptions.removeValue(forKey: id) != nil {
                state.subscribersDropped += 1
            }
        }
    }
}

/// One transaction's event for one filter, as `deliver` shares it among that filter's subscribers.
enum EncodedChange {
    /// The transaction changed nothing in the filter's set.
    case nothing
    case frame(ChangedEventFrame)
    /// The event holds a value JSON cannot express.
    case unencodable(ChangedEvent)

    init(_ event: ChangedEvent?) {
        guard let event else {
            self = .nothing
            return
        }
        do {
            self = .frame(try ChangedEventFrame(event))
        } catch {
            self = .unencodable(event)
        }
    }
}

extension SubscriptionHub {
    /// Whether `filter` may report an updated object of `changes` with a to-many value the store left out and
    /// needs it (`SubscriptionFilter.needsToManyValues`): `store.changed` values carry whole to-many arrays, as
    /// `docs/protocol.md` has them. Filters with `"toMany":"changes"` and no predicate never need them.
    func needsToManyValues(of changes: ChangeSet, for filter: SubscriptionFilter) -> Bool {
        guard filter.needsToManyValues, !changes.updated.isEmpty else { return false }
        guard let entity = filter.entity else { return true }
        return changes.updated.contains { $0.snapshot.id.entity == entity }
    }

    /// `changes` with the to-many values a store leaves out of updated snapshots filled in as of `changes.txn`
    /// (`PersistentStore.completingToManyValues(in:timeline:)`), when one of `filters` needs them; `timeline`
    /// holds the later transactions already read.
    ///
    /// - Throws: when the arrays as of `changes.txn` cannot be told (the history no longer reaches back to it).
    func completingToMany(
        _ changes: ChangeSet, for filters: [SubscriptionFilter], timeline: inout ToManyTimeline
    ) throws -> ChangeSet {
        guard filters.contains(where: { needsToManyValues(of: changes, for: $0) }) else { return changes }
        return try store.completingToManyValues(in: changes, timeline: &timeline)
    }

    /// `completingToMany` for `deliver`, with the hub's live timeline: the completed change set, or `changes`
    /// and why it could not be completed (then the subscriptions that need the arrays cannot be sent it).
    private func completingLiveToMany(
        _ changes: ChangeSet, for filters: [SubscriptionFilter]
    ) -> (ChangeSet, failure: String?) {
        // Taken out of the lock (and left empty there) for the store reads; only this queue uses it.
        var timeline = liveTimeline.withLock { timeline in
            defer { timeline = ToManyTimeline(model: model) }
            return timeline
        }
        let result: (ChangeSet, failure: String?)
        do {
            result = (try completingToMany(changes, for: filters, timeline: &timeline), nil)
        } catch {
            timeline = ToManyTimeline(model: model, after: changes.txn)
            result = (changes, "\(error)")
        }
        liveTimeline.withLock { [timeline] in $0 = timeline }
        return result
    }
}

/// Values of related objects for predicates with relationship key paths: the transaction's own
/// objects first (deleted ones read as gone), then the store's committed values, cached.
struct ChangeLookup {
    private var known: [ObjectID: [String: PropertyValue]?] = [:]
    private let store: any PersistentStore

    init(changes: ChangeSet, store: any PersistentStore) {
        self.store = store
        for snapshot in changes.inserted { known[snapshot.id] = .some(snapshot.values) }
        for update in changes.updated { known[update.snapshot.id] = .some(update.snapshot.values) }
        for snapshot in changes.deleted { known[snapshot.id] = .some(nil) }
    }

    mutating func values(of id: ObjectID) -> [String: PropertyValue]? {
        if let cached = known[id] { return cached }
        let values = (try? store.objects(with: [id]))?.objects.first?.values
        known[id] = .some(values)
        return values
    }
}

extension SubscriptionHub {
    /// The to-many changes of `changes` as committed (before `completingToMany`, whose arrays may already hold
    /// later transactions' members), when one of `filters` sends them; empty otherwise. Read from the change set
    /// alone, never from the store.
    func toManyChanges(of changes: ChangeSet, for filters: [SubscriptionFilter]) -> [ObjectID: [String: ToManyChange]] {
        guard !changes.updated.isEmpty, filters.contains(where: { $0.toMany == .changes }) else { return [:] }
        return changes.toManyChanges(model: model)
    }
}
