import ContextBusDBus
import ContextBusReactive
import ContextBusWire

/// The link's life: observing BlueZ, connect attempts, enabling notifications, losing the link, backing off.
extension WatchLink {
    /// Starts observing BlueZ, then adopts the link if the device is connected already, else connects.
    func start() {
        let observation = environment.bluez.observe { [weak self] event in self?.handle(event) }
        let adopt = state.withLock { state -> Bool? in
            guard state.phase == .idle else { return nil }
            state.observation = observation
            return isConnectedAndResolved
        }
        guard let adopt else { return observation.dispose() }
        if adopt { linkEstablished(epoch: nil) } else { beginAttempt(epoch: nil) }
    }

    /// Whether BlueZ's tree says the device is connected with its services resolved.
    var isConnectedAndResolved: Bool {
        guard let device = environment.bluez.tree.device(address, onAdapter: adapter) else { return false }
        return device.isConnected && device.servicesResolved
    }

    // MARK: - BlueZ's events (delivery queue)

    private func handle(_ event: BlueZEvent) {
        switch event {
        case .propertiesChanged(let change):
            if change.interface == BlueZ.characteristicInterface {
                if let bytes = change.changed["Value"]?.bytesValue { received(bytes, at: change.path) }
            } else if change.interface == BlueZ.deviceInterface, isOurDevice(change.path) {
                if change.changed["Connected"]?.boolValue == false {
                    linkLost(reason: "link lost (Connected turned false)")
                } else if change.changed["ServicesResolved"]?.boolValue == true
                    || change.changed["Connected"]?.boolValue == true
                {
                    adoptIfConnected()
                }
            }
        case .interfacesRemoved(let removed)
        where removed.interfaces.contains(BlueZ.deviceInterface) && isOurDevice(removed.objectPath):
            linkLost(reason: "BlueZ removed the device")
        case .vanished:
            linkLost(reason: "BlueZ left the bus")
        case .appeared:
            bluezReturned()
        default:
            break
        }
    }

    private func isOurDevice(_ path: DBusObjectPath) -> Bool {
        environment.bluez.tree.device(at: path)?.address == address.string
            || path
                == BlueZ.makePath(
                    "/org/bluez/\(adapter)/dev_" + address.string.replacingOccurrences(of: ":", with: "_"))
    }

    // MARK: - Attempts

    /// Starts a connect attempt (the first one of the link when `epoch` is nil; else the one a timer scheduled).
    func beginAttempt(epoch expected: UInt64?) {
        let began = state.withLock { state -> (epoch: UInt64, reconnecting: Bool)? in
            if let expected, state.epoch != expected { return nil }
            guard state.phase == .idle || state.phase == .waiting else { return nil }
            state.phase = .connecting
            state.epoch &+= 1
            state.operation = nil
            if state.attempt > 0 { tellAll(&state, .reconnecting, attempt: state.attempt, error: state.lastError) }
            return (state.epoch, state.attempt > 0)
        }
        guard let (attempt, reconnecting) = began else { return }
        if reconnecting { environment.onReconnectAttempt() }
        flush()
        environment.log?.debug("watch link \(address): connect attempt (epoch \(attempt))")
        let connecting = environment.bluez.connectTakingATurn(
            address, onAdapter: adapter, turns: environment.turns, resolveTimeout: environment.resolveTimeout,
            callTimeout: environment.callTimeout)
        let operation = connecting.start { [weak self] event in
            switch event {
            case .completed: self?.linkEstablished(epoch: attempt)
            case .failed(let error): self?.attemptFailed(epoch: attempt, error: error)
            case .value, .interrupted: break
            }
        }
        let stale = state.withLock { state -> Bool in
            guard state.epoch == attempt, state.phase == .connecting else { return true }
            state.operation = operation
            return false
        }
        if stale { operation.dispose() }
    }

    private func attemptFailed(epoch: UInt64, error: DeviceError) {
        let scheduled = state.withLock { state -> Bool in
            guard state.epoch == epoch, state.phase == .connecting else { return false }
            state.operation = nil
            if state.attempt == 0 { tellAll(&state, .disconnected, error: error.description) }
            state.attempt += 1
            state.lastError = error.description
            state.phase = .waiting
            return true
        }
        guard scheduled else { return }
        environment.log?.info("watch link \(address): connect failed: \(error)")
        flush()
        scheduleAttempt()
    }

    /// Schedules the next attempt after its backoff (or after `attempt` 1's when `soon`).
    func scheduleAttempt(soon: Bool = false) {
        let timer = state.withLock { state -> (UInt64, Duration)? in
            guard state.phase == .waiting else { return nil }
            state.epoch &+= 1
            let backoff = ReconnectBackoff(policy: Self.policy(of: state.members))
            let delay = backoff.delay(beforeAttempt: soon ? 1 : max(state.attempt, 1), unit: environment.random())
            return (state.epoch, delay)
        }
        guard let (epoch, delay) = timer else { return }
        let operation = environment.scheduler.schedule(after: delay) { [weak self] in
            self?.beginAttempt(epoch: epoch)
        }
        let stale = state.withLock { state -> Bool in
            guard state.epoch == epoch, state.phase == .waiting else { return true }
            state.operation = operation
            return false
        }
        if stale { operation.dispose() }
    }

    // MARK: - The link up: notifications

    /// The device is connected with its services resolved (our attempt, or someone else's link adopted): enable the
    /// notifications.
    func linkEstablished(epoch expected: UInt64?) {
        var actions: [@Sendable () -> Void] = []
        state.withLock { state in
            if let expected, state.epoch != expected { return }
            guard state.phase != .closed, state.phase != .up, state.phase != .enabling else { return }
            state.operation = nil
            state.phase = .enabling
            state.epoch &+= 1
            actions = enableMissing(&state)
            if state.phase == .enabling, state.pending.isEmpty { markUp(&state) }
        }
        run(actions)
    }

    /// Holds the notify session of every wanted characteristic that has none on this link yet (call under the lock;
    /// run the returned actions after it). A characteristic the device does not have fails the link.
    func enableMissing(_ state: inout State) -> [@Sendable () -> Void] {
        let tree = environment.bluez.tree
        guard let device = tree.device(address, onAdapter: adapter) else {
            return [{ self.linkFailed(reason: "BlueZ does not know the device \(self.address)", disconnect: false) }]
        }
        let epoch = state.epoch
        var actions: [@Sendable () -> Void] = []
        for uuid in Self.wanted(by: state.members).sorted() where state.sessions[uuid] == nil {
            guard let spelled = BluetoothUUID(uuid),
                let characteristic = tree.characteristic(spelled, onDevice: device.path)
            else {
                let reason = DeviceError.unknownCharacteristic(address: address.string, uuid: uuid).description
                return [{ self.linkFailed(reason: reason, disconnect: true) }]
            }
            state.pending.insert(uuid)
            state.paths[characteristic.path] = uuid
            // The session is stored before its `ready` can run (which takes the lock): see `holdSession`.
            actions.append { self.holdSession(uuid, at: characteristic.path, epoch: epoch) }
        }
        return actions
    }

    /// Holds the session of `uuid` for this link. Its `ready` may run before `holdNotifySession` returns (a session
    /// a chain already enabled): `notifyReady` needs only `pending`, and the hold is stored either way while the link
    /// is the same.
    private func holdSession(_ uuid: String, at path: DBusObjectPath, epoch: UInt64) {
        let hold = environment.bluez.holdNotifySession(at: path, callTimeout: environment.callTimeout) {
            [weak self] error in
            self?.notifyReady(uuid, epoch: epoch, error: error)
        }
        let keep = state.withLock { state -> Bool in
            guard state.epoch == epoch, state.sessions[uuid] == nil else { return false }
            state.sessions[uuid] = hold
            return true
        }
        if !keep { hold.dispose() }
    }

    private func notifyReady(_ uuid: String, epoch: UInt64, error: DeviceError?) {
        if let error {
            let current = state.withLock { $0.epoch == epoch && $0.pending.contains(uuid) }
            if current {
                environment.log?.warning("watch link \(address): StartNotify \(uuid) failed: \(error)")
                linkFailed(reason: "StartNotify \(uuid): \(error)", disconnect: true)
            }
            return
        }
        state.withLock { state in
            guard state.epoch == epoch, state.pending.remove(uuid) != nil else { return }
            // Up once every session is on; a watch that joined an up link waited for its own characteristics only.
            if state.phase == .enabling || state.phase == .up, state.pending.isEmpty { markUp(&state) }
        }
        flush()
    }

    // MARK: - Losing the link

    /// The link was lost (or BlueZ left): `disconnected`, sessions released, the next attempt after the backoff.
    func linkLost(reason: String) {
        let released = state.withLock { state -> [any Disposable]? in
            guard state.phase == .up || state.phase == .enabling else {
                if state.phase == .waiting, reason == "BlueZ left the bus" { state.lastError = reason }
                return nil
            }
            let released = releaseLink(&state)
            tellAll(&state, .disconnected, error: reason)
            state.attempt = 1
            state.lastError = reason
            state.phase = .waiting
            return released
        }
        guard let released else { return }
        environment.log?.info("watch link \(address): \(reason); reconnecting")
        for session in released { session.dispose() }
        flush()
        scheduleAttempt()
    }

    /// The link is up but not as wanted (a `StartNotify` failed, a characteristic is missing): it is disconnected (when
    /// `disconnect`), then connected again after the backoff.
    func linkFailed(reason: String, disconnect: Bool) {
        let released = state.withLock { state -> [any Disposable]? in
            guard state.phase == .enabling || state.phase == .up else { return nil }
            let released = releaseLink(&state)
            tellAll(&state, .disconnected, error: reason)
            state.attempt = 1
            state.lastError = reason
            state.phase = .waiting
            return released
        }
        guard let released else { return }
        for session in released { session.dispose() }
        flush()
        guard disconnect else { return scheduleAttempt() }
        let disconnecting = environment.bluez.disconnect(
            address, onAdapter: adapter, callTimeout: environment.callTimeout)
        let operation = disconnecting.start { [weak self] event in
            if event.isTerminating { self?.scheduleAttempt() }
        }
        _ = operation
    }

    /// Forgets this link's sessions and operation (call under the lock; dispose what it returns after it).
    private func releaseLink(_ state: inout State) -> [any Disposable] {
        state.epoch &+= 1
        var released = Array(state.sessions.values)
        if let operation = state.operation { released.append(operation) }
        state.sessions = [:]
        state.pending = []
        state.paths = [:]
        state.operation = nil
        return released
    }

    /// BlueZ is back: a link waiting for its next attempt tries soon instead of after its grown backoff.
    private func bluezReturned() {
        let waiting = state.withLock { state -> (any Disposable)? in
            guard state.phase == .waiting else { return nil }
            defer { state.operation = nil }
            return state.operation ?? AnyDisposable {}
        }
        guard let waiting else { return }
        waiting.dispose()
        scheduleAttempt(soon: true)
    }

    /// Someone else connected the device (a chain): a link waiting for its next attempt takes it at once.
    private func adoptIfConnected() {
        guard isConnectedAndResolved else { return }
        let waiting = state.withLock { state -> (any Disposable)? in
            guard state.phase == .waiting else { return nil }
            defer { state.operation = nil }
            return state.operation ?? AnyDisposable {}
        }
        guard let waiting else { return }
        waiting.dispose()
        linkEstablished(epoch: nil)
    }
}
