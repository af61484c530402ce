import Foundation

@testable import ContextBusReactive
@testable import ContextBusSupport
@testable import ContextBusWire
@testable import devicesvc

/// A `DeviceBackend` whose operations follow a script, in virtual time, and log every call: the chain runner's
/// test double.
///
/// Each operation is identified by a key such as `"Connect AA:BB:CC:DD:EE:01"` or `"ReadValue
/// AA:BB:CC:DD:EE:01 2a19"`; `script(_:_:)` queues behaviours for a key, and an operation with no behaviour left
/// succeeds at once. The log records `"<key>"` when an operation starts, `"<key> done"` when it succeeds and
/// `"StopNotify …"` when a notify session ends.
final class ScriptedBackend: DeviceBackend {
    enum Behaviour: Sendable {
        case succeed
        case fail(DeviceError)
        /// Never answers.
        case hang
        /// Succeeds after a virtual delay.
        case delay(Duration)
        /// Connect only: the link comes up after `linkUp` (logged as `"<key> linked"`), the services resolve
        /// `resolved` later.
        case staged(linkUp: Duration, resolved: Duration)
    }

    let scheduler: TestScheduler
    private let state = Locked(State())

    private struct State {
        var log: [String] = []
        var scripts: [String: [Behaviour]] = [:]
        var isAvailable = true
        var readValues: [String: Data] = [:]
        var linkWatchers: [UInt64: (address: String, observer: Observer<Never, DeviceError>)] = [:]
        var notifyWatchers: [UInt64: (key: String, observer: Observer<Data, DeviceError>)] = [:]
        var nextToken: UInt64 = 0
    }

    init(scheduler: TestScheduler) {
        self.scheduler = scheduler
    }

    /// Every call, in order.
    var log: [String] { state.withLock { $0.log } }

    /// Queues behaviours for the operation `key`.
    func script(_ key: String, _ behaviours: Behaviour...) {
        state.withLock { $0.scripts[key, default: []].append(contentsOf: behaviours) }
    }

    /// What `ReadValue` returns for `address`/`uuid`.
    func setValue(_ value: Data, for address: String, _ uuid: String) {
        state.withLock { $0.readValues["\(address) \(uuid)"] = value }
    }

    /// Makes BlueZ (un)available.
    func setAvailable(_ available: Bool) {
        state.withLock { $0.isAvailable = available }
    }

    /// Drops the link to `address`: every link-loss watcher for it fails.
    func dropLink(_ address: String) {
        let watchers = state.withLock { state in state.linkWatchers.values.filter { $0.address == address } }
        for watcher in watchers { watcher.observer.send(error: .linkLost(address: address)) }
    }

    /// Sends a notification to every active notify session on `address`/`uuid`.
    func notify(_ address: String, _ uuid: String, _ value: Data) {
        let watchers = state.withLock { state in state.notifyWatchers.values.filter { $0.key == "\(address) \(uuid)" } }
        for watcher in watchers { watcher.observer.send(value: value) }
    }

    /// The number of notify sessions open now.
    var notifySessionCount: Int { state.withLock { $0.notifyWatchers.count } }

    // MARK: - DeviceBackend

    /// An empty tree: the runner only asks whether BlueZ is available.
    func availableTree() throws(DeviceError) -> BlueZObjectTree {
        guard state.withLock({ $0.isAvailable }) else { throw .unavailable("scripted: BlueZ is not on the bus") }
        return BlueZObjectTree()
    }

    /// A plain behaviour brings the link up when the connect succeeds; `.staged` brings it up earlier.
    func connect(
        _ address: BluetoothAddress, onAdapter adapter: String, resolveTimeout: Duration, callTimeout: Duration
    ) -> Signal<ConnectStage, DeviceError> {
        let key = "Connect \(address)"
        return Signal { observer, lifetime in
            let connect = self.operation(key, value: ConnectStage.linkUp) { linkUp, resolved in
                lifetime += self.scheduler.schedule(after: linkUp) {
                    self.state.withLock { $0.log.append("\(key) linked") }
                    observer.send(value: .linkUp)
                    lifetime += self.scheduler.schedule(after: resolved) {
                        self.state.withLock { $0.log.append("\(key) done") }
                        observer.sendCompleted()
                    }
                }
            }
            lifetime += connect.start(observer)
        }
    }

    func read(
        _ characteristic: BluetoothUUID, of address: BluetoothAddress, onAdapter adapter: String, callTimeout: Duration
    ) -> Signal<Data, DeviceError> {
        let key = "\(address) \(characteristic.string)"
        return Signal { observer, lifetime in
            let value = self.state.withLock { $0.readValues[key] } ?? Data([0x2A])
            lifetime += self.operation("ReadValue \(key)", value: value).start(observer)
        }
    }

    func write(
        _ value: Data, to characteristic: BluetoothUUID, of address: BluetoothAddress, onAdapter adapter: String,
        withResponse: Bool, callTimeout: Duration
    ) -> Signal<Void, DeviceError> {
        operation(
            "WriteValue \(address) \(characteristic.string) \(value.base64EncodedString()) "
                + (withResponse ? "request" : "command"), value: ())
    }

    func notifications(
        _ characteristic: BluetoothUUID, of address: BluetoothAddress, onAdapter adapter: String, callTimeout: Duration
    ) -> Signal<Data, DeviceError> {
        let key = "\(address) \(characteristic.string)"
        return Signal { observer, lifetime in
            let token = self.state.withLock { state -> UInt64 in
                state.nextToken += 1
                state.notifyWatchers[state.nextToken] = (key, observer)
                return state.nextToken
            }
            lifetime.observeEnded {
                self.state.withLock { state in
                    state.notifyWatchers[token] = nil
                    state.log.append("StopNotify \(key)")
                }
            }
            lifetime += self.operation("StartNotify \(key)", value: ()).startWithFailed { observer.send(error: $0) }
        }
    }

    func readDescriptor(
        _ uuid: BluetoothUUID, of characteristic: BluetoothUUID, of address: BluetoothAddress,
        onAdapter adapter: String, callTimeout: Duration
    ) -> Signal<Data, DeviceError> {
        let key = "\(address) \(characteristic.string)/\(uuid.string)"
        return Signal { observer, lifetime in
            let value = self.state.withLock { $0.readValues[key] } ?? Data([0x2B])
            lifetime += self.operation("ReadDescriptor \(key)", value: value).start(observer)
        }
    }

    func writeDescriptor(
        _ value: Data, to uuid: BluetoothUUID, of characteristic: BluetoothUUID, of address: BluetoothAddress,
        onAdapter adapter: String, callTimeout: Duration
    ) -> Signal<Void, DeviceError> {
        operation(
            "WriteDescriptor \(address) \(characteristic.string)/\(uuid.string) \(value.base64EncodedString())",
            value: ())
    }

    func disconnect(
        _ address: BluetoothAddress, onAdapter adapter: String, callTimeout: Duration
    ) -> Signal<Void, DeviceError> {
        operation("Disconnect \(address)", value: ())
    }

    func linkLoss(_ address: BluetoothAddress, onAdapter adapter: String) -> Signal<Never, DeviceError> {
        Signal { observer, lifetime in
            let token = self.state.withLock { state -> UInt64 in
                state.nextToken += 1
                state.linkWatchers[state.nextToken] = (address.string, observer)
                return state.nextToken
            }
            lifetime.observeEnded { _ = self.state.withLock { $0.linkWatchers.removeValue(forKey: token) } }
        }
    }

    // MARK: - Internals

    /// `staged` runs a `.staged` behaviour (the caller sends its events); any other operation treats it as
    /// success.
    private func operation<Value: Sendable>(
        _ key: String, value: Value, staged: (@Sendable (_ linkUp: Duration, _ resolved: Duration) -> Void)? = nil
    ) -> Signal<Value, DeviceError> {
        Signal { observer, lifetime in
            let behaviour = self.state.withLock { state -> Behaviour in
                state.log.append(key)
                guard var queue = state.scripts[key], !queue.isEmpty else { return .succeed }
                let next = queue.removeFirst()
                state.scripts[key] = queue
                return next
            }
            let succeed: @Sendable () -> Void = {
                self.state.withLock { $0.log.append("\(key) done") }
                observer.send(value: value)
                observer.sendCompleted()
            }
            switch behaviour {
            case .succeed: succeed()
            case .fail(let error): observer.send(error: error)
            case .hang: break
            case .delay(let delay): lifetime += self.scheduler.schedule(after: delay, succeed)
            case .staged(let linkUp, let resolved):
                if let staged { staged(linkUp, resolved) } else { succeed() }
            }
        }
    }
}

/// Collects the events of a started chain.
final class ChainEvents: Sendable {
    private let storage = Locked<[Event<ChainProgress, ChainError>]>([])

    var observer: Observer<ChainProgress, ChainError> {
        Observer { event in self.storage.withLock { $0.append(event) } }
    }

    var events: [Event<ChainProgress, ChainError>] { storage.withLock { $0 } }

    /// The progress values so far.
    var progress: [ChainProgress] { events.compactMap(\.value) }

    /// The error, once the chain failed.
    var error: ChainError? { events.last?.error }

    /// Whether the chain completed.
    var isCompleted: Bool {
        if case .completed? = events.last { return true }
        return false
    }

    /// Whether the chain has ended one way or another.
    var hasEnded: Bool { events.last?.isTerminating ?? false }
}
