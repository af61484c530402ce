import ContextBusReactive
import ContextBusServer
import ContextBusSupport
import ContextBusWire

/// Every watch of the service and the links they share: one `WatchLink` per device (and adapter), made by its first
/// watch and closed by its last.
///
/// A watch belongs to its client's connection (it ends when the connection closes, or with `device.unwatch` from
/// that connection) or, for `--watch`, to the service. When a link closes, the device is disconnected in its chain
/// lane (`ChainRunner.afterChains`): after the chains queued before, unless a watch holds the link again by then.
final class WatchManager: Sendable {
    let environment: WatchLink.Environment
    let runner: ChainRunner
    let cleanupTimeout: Duration
    private let state = Locked(State())

    private struct State {
        var nextID: Int64 = 1
        var links: [String: WatchLink] = [:]
        /// Each watch's link key and owner (a connection id; `nil` for the service's own).
        var watches: [Int64: (key: String, owner: UInt64?)] = [:]
    }

    init(environment: WatchLink.Environment, runner: ChainRunner, cleanupTimeout: Duration = .seconds(5)) {
        self.environment = environment
        self.runner = runner
        self.cleanupTimeout = cleanupTimeout
    }

    private static func key(_ address: BluetoothAddress, _ adapter: String) -> String { "\(adapter)/\(address)" }

    /// A new watch id (the handler answers with it before the watch starts sending events).
    func makeID() -> Int64 {
        state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
    }

    /// Starts watch `id` on the device's shared link (starting the link when it is the first).
    func start(
        _ id: Int64, address: BluetoothAddress, adapter: String, characteristics: [BluetoothUUID],
        policy: ReconnectPolicy, owner: UInt64?, sink: any WatchSink
    ) {
        let key = Self.key(address, adapter)
        let member = WatchLink.Member(id: id, characteristics: characteristics, policy: policy, sink: sink)
        while true {
            let link = state.withLock { state -> WatchLink in
                state.watches[id] = (key, owner)
                if let link = state.links[key], link.phase != .closed { return link }
                let link = WatchLink(address: address, adapter: adapter, environment: environment)
                state.links[key] = link
                return link
            }
            // A link whose last watch left between the lookup and here is closed: take a new one.
            if link.add(member) { return }
        }
    }

    /// Ends watch `id` when `owner` may (its own connection, or the service for `nil`); the last watch of a link closes
    /// it and disconnects the device.
    ///
    /// - Returns: `false` when there is no such watch of that owner.
    @discardableResult
    func stop(_ id: Int64, owner: UInt64?) -> Bool {
        let found = state.withLock { state -> (String, WatchLink?)? in
            guard let watch = state.watches[id], watch.owner == owner || owner == nil else { return nil }
            state.watches[id] = nil
            return (watch.key, state.links[watch.key])
        }
        guard let (key, link) = found else { return false }
        guard let link, link.remove(id) else { return true }
        state.withLock { state in
            if state.links[key] === link { state.links[key] = nil }
        }
        disconnectWhenFree(link.address, adapter: link.adapter)
        return true
    }

    /// Whether a watch holds the device's link: chains then leave it up.
    func holdsLink(_ address: BluetoothAddress, adapter: String) -> Bool {
        state.withLock { state in
            guard let link = state.links[Self.key(address, adapter)] else { return false }
            return link.phase != .closed
        }
    }

    /// Watches now.
    var count: Int { state.withLock { $0.watches.count } }

    /// Closes every link and disconnects its device (the service stopping); waits up to the clean-up timeout.
    func stopAll() async {
        let links = state.withLock { state -> [WatchLink] in
            defer {
                state.links = [:]
                state.watches = [:]
            }
            return Array(state.links.values)
        }
        for link in links { link.closeAll() }
        await withTaskGroup(of: Void.self) { group in
            for link in links {
                group.addTask { [self] in
                    _ = try? await disconnect(link.address, adapter: link.adapter).value
                }
            }
        }
    }

    /// Disconnects the device in its chain lane, unless a watch holds its link again by then.
    private func disconnectWhenFree(_ address: BluetoothAddress, adapter: String) {
        let work = Signal<Void, DeviceError> { [weak self] observer, lifetime in
            guard let self, !self.holdsLink(address, adapter: adapter) else { return observer.sendCompleted() }
            lifetime += self.disconnect(address, adapter: adapter).start(observer)
        }
        _ = runner.afterChains(on: address, run: work).start { _ in }
    }

    private func disconnect(_ address: BluetoothAddress, adapter: String) -> Signal<Void, DeviceError> {
        environment.bluez.disconnect(address, onAdapter: adapter, callTimeout: cleanupTimeout)
            .timeout(
                after: cleanupTimeout, raising: .noReply(member: "Disconnect", after: cleanupTimeout),
                on: environment.scheduler
            )
            .flatMapError { _ in Signal<Void, DeviceError>.empty }
    }
}
