import ContextBusDBus
import ContextBusReactive
import ContextBusServer
import ContextBusSupport
import ContextBusWire
import Foundation

/// One device's link as the watches on it want it: connected, with notifications on for every characteristic any of
/// them names — desired state, reconciled after every (re)connect and after BlueZ leaving and coming back.
///
/// ```
///  idle ──first watch──▶ connecting ──services resolved──▶ enabling ──every StartNotify answered──▶ up
///                          │   ▲                              │                                      │
///          attempt failed  │   │ backoff timer                │ StartNotify failed: Disconnect       │ link lost,
///                          ▼   │ (or BlueZ back: soon)        ▼                                      │ BlueZ gone
///                        waiting ◀────────────────────────────┴──────────────────────────────────────┘
///  last watch gone ─▶ closed (sessions released; WatchManager disconnects after the device's queued chains)
/// ```
///
/// - **One link, notifications enabled once per link.** Every watch on the device shares this object; each
///   characteristic's notify session is held once (`BlueZClient.holdNotifySession`: one `StartNotify` per link,
///   shared with a chain's notify step on the same characteristic), released when the link is lost (`StopNotify`, so
///   that BlueZ's session does not outlive the link) and taken anew on the next link.
/// - **Values**: every `PropertiesChanged(Value)` of a watched characteristic while notifications are being enabled or
///   on is one `device.value` per watch that names it — BlueZ signals each notification once, and the link observes
///   it once, so none is doubled after a reconnect.
/// - **Reconnects** (`ReconnectBackoff`): after a link loss attempt 1 comes after about `minMs`, each next one twice as
///   late (with jitter), at most `maxMs` apart, for ever; each is one `reconnecting` event. A link someone else brings
///   up (a chain's connect) is adopted at once. While BlueZ is away every attempt fails at once; when it returns, the
///   next attempt comes after about `minMs`.
///
/// Transitions run under `state`'s lock from the D-Bus delivery queue (BlueZ's signals, call replies) and the
/// scheduler (timers); a stale callback is told by `epoch`. Events are queued under that lock and delivered by one
/// thread at a time in that order (`flush`), never while the lock is held.
final class WatchLink: Sendable {
    /// One watch on the link.
    struct Member: Sendable {
        let id: Int64
        /// As the watch named them: each value goes out under the watch's own spelling.
        let characteristics: [BluetoothUUID]
        let policy: ReconnectPolicy
        let sink: any WatchSink
        /// Whether it was told `connected` for the current link.
        var isConnected = false
    }

    enum Phase: Sendable, Hashable {
        /// Created, not started.
        case idle
        /// A connect attempt is waiting for the adapter's turn or for BlueZ.
        case connecting
        /// Connected with services resolved; `StartNotify`s on their way.
        case enabling
        /// Notifications on.
        case up
        /// The link was lost or an attempt failed: the next attempt is scheduled.
        case waiting
        /// No watch left.
        case closed
    }

    /// What a link works with.
    struct Environment: Sendable {
        let bluez: BlueZClient
        /// The adapter's link set-up turns (shared with chains' connect steps).
        let turns: ChainQueue<String>
        let scheduler: any Scheduler
        let decoders: CharacteristicDecoders
        let resolveTimeout: Duration
        let callTimeout: Duration
        /// A number in `0..<1` for the backoff's jitter.
        let random: @Sendable () -> Double
        let log: ServiceLog?
        /// Told of every reconnect attempt (not the link's first connect), for `device.stats`.
        var onReconnectAttempt: @Sendable () -> Void = {}
    }

    let address: BluetoothAddress
    let adapter: String
    let environment: Environment
    let state = Locked(State())

    struct State {
        var members: [Int64: Member] = [:]
        var phase = Phase.idle
        /// The number of the next connect attempt since the link was lost; 0 for the first connect of the link.
        var attempt = 0
        /// Why the last attempt failed, for the next `reconnecting` event.
        var lastError: String?
        /// Bumped by every transition that makes pending callbacks and timers stale.
        var epoch: UInt64 = 0
        /// The connect attempt on its way, or the timer of the next one.
        var operation: (any Disposable)?
        /// The notify sessions held on this link, by lowercase 128-bit UUID.
        var sessions: [String: any Disposable] = [:]
        /// The characteristics whose `StartNotify` is on its way.
        var pending: Set<String> = []
        /// This link's characteristic objects, for routing values.
        var paths: [DBusObjectPath: String] = [:]
        var observation: (any Disposable)?
        var outbox: [Outgoing] = []
        var isFlushing = false
    }

    /// An event on its way to a watch.
    enum Outgoing: Sendable {
        case value(any WatchSink, DeviceValueEvent)
        case link(any WatchSink, DeviceLinkEvent)
    }

    init(address: BluetoothAddress, adapter: String, environment: Environment) {
        self.address = address
        self.adapter = adapter
        self.environment = environment
    }

    var phase: Phase { state.withLock { $0.phase } }
    var isEmpty: Bool { state.withLock { $0.members.isEmpty } }

    /// The characteristics some watch names, by lowercase 128-bit UUID.
    static func wanted(by members: [Int64: Member]) -> Set<String> {
        Set(members.values.flatMap { $0.characteristics.map(\.canonical) })
    }

    /// The policy of the link: the most eager of its watches' (smallest `minMs`, smallest `maxMs`).
    static func policy(of members: [Int64: Member]) -> ReconnectPolicy {
        let policies = members.values.map(\.policy)
        guard let first = policies.first else { return .standard }
        return ReconnectPolicy(
            minMs: policies.map(\.minMs).min() ?? first.minMs, maxMs: policies.map(\.maxMs).min() ?? first.maxMs)
    }

    // MARK: - Members

    /// Adds a watch; the first one starts the link. A watch that joins a link that is up is told `connected` once its
    /// characteristics' notifications are on too (at once when they are).
    ///
    /// - Returns: `false` when the link closed meanwhile (its last watch left): the caller makes a new one.
    func add(_ member: Member) -> Bool {
        var actions: [@Sendable () -> Void] = []
        let added = state.withLock { state -> Bool in
            guard state.phase != .closed else { return false }
            state.members[member.id] = member
            switch state.phase {
            case .idle:
                if state.members.count == 1 { actions.append { self.start() } }
            case .enabling, .up:
                actions += enableMissing(&state)
                if state.pending.isEmpty { markUp(&state) }
            case .connecting, .waiting, .closed:
                break
            }
            return true
        }
        run(actions)
        return added
    }

    /// Removes a watch; the last one closes the link.
    ///
    /// - Returns: whether the link closed (the caller then disconnects the device once no chain needs it).
    @discardableResult
    func remove(_ id: Int64) -> Bool {
        var released: [any Disposable] = []
        let closed = state.withLock { state -> Bool in
            guard state.members.removeValue(forKey: id) != nil else { return false }
            if state.members.isEmpty {
                released = close(&state)
                return true
            }
            let wanted = Self.wanted(by: state.members)
            for uuid in state.sessions.keys where !wanted.contains(uuid) {
                if let session = state.sessions.removeValue(forKey: uuid) { released.append(session) }
                state.pending.remove(uuid)
                state.paths = state.paths.filter { $0.value != uuid }
            }
            if state.phase == .enabling, state.pending.isEmpty { markUp(&state) }
            return false
        }
        for session in released { session.dispose() }
        flush()
        return closed
    }

    /// Closes the link whatever its watches (the service stopping).
    func closeAll() {
        let released = state.withLock { state -> [any Disposable] in
            state.members = [:]
            return close(&state)
        }
        for session in released { session.dispose() }
    }

    private func close(_ state: inout State) -> [any Disposable] {
        state.phase = .closed
        state.epoch &+= 1
        var released = Array(state.sessions.values)
        state.sessions = [:]
        state.pending = []
        state.paths = [:]
        if let operation = state.operation { released.append(operation) }
        state.operation = nil
        if let observation = state.observation { released.append(observation) }
        state.observation = nil
        return released
    }

    // MARK: - Events out

    /// Queues `connected` for every watch not told yet, and makes the link up.
    func markUp(_ state: inout State) {
        state.phase = .up
        state.attempt = 0
        state.lastError = nil
        for id in state.members.keys.sorted() where state.members[id]?.isConnected == false {
            guard let member = state.members[id] else { continue }
            state.members[id]?.isConnected = true
            state.outbox.append(.link(member.sink, DeviceLinkEvent(watch: id, address: address, state: .connected)))
        }
    }

    /// Queues a link event for every watch.
    func tellAll(_ state: inout State, _ linkState: DeviceLinkEvent.State, attempt: Int? = nil, error: String? = nil) {
        for id in state.members.keys.sorted() {
            guard let member = state.members[id] else { continue }
            state.members[id]?.isConnected = false
            state.outbox.append(
                .link(
                    member.sink,
                    DeviceLinkEvent(watch: id, address: address, state: linkState, attempt: attempt, error: error)))
        }
    }

    /// A notification of the characteristic at `path`: a `device.value` for each watch that names it.
    func received(_ bytes: [UInt8], at path: DBusObjectPath) {
        let queued = state.withLock { state -> Bool in
            guard state.phase == .up || state.phase == .enabling, let uuid = state.paths[path] else { return false }
            let value = Data(bytes)
            var measurement: Quantity?
            var decoded = false
            for id in state.members.keys.sorted() {
                guard let member = state.members[id],
                    let spelled = member.characteristics.first(where: { $0.canonical == uuid })
                else { continue }
                if !decoded {
                    measurement = environment.decoders.decode(value, of: spelled)
                    decoded = true
                }
                state.outbox.append(
                    .value(
                        member.sink,
                        DeviceValueEvent(
                            watch: id, address: address, characteristic: spelled, value: value,
                            number: measurement?.number, unit: measurement?.unit)))
            }
            return decoded
        }
        if queued { flush() }
    }

    /// Delivers queued events in order, one thread at a time, outside the state lock.
    func flush() {
        while true {
            let batch = state.withLock { state -> [Outgoing]? in
                guard !state.isFlushing, !state.outbox.isEmpty else { return nil }
                state.isFlushing = true
                defer { state.outbox = [] }
                return state.outbox
            }
            guard let batch else { return }
            for item in batch {
                switch item {
                case .value(let sink, let event): sink.value(event)
                case .link(let sink, let event): sink.link(event)
                }
            }
            state.withLock { $0.isFlushing = false }
        }
    }

    /// Runs side effects decided under the lock, then delivers the events they queued.
    func run(_ actions: [@Sendable () -> Void]) {
        for action in actions { action() }
        flush()
    }
}
