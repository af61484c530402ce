import ContextBusDBus
import ContextBusReactive
import ContextBusSupport
import ContextBusWire

/// What one session of ours asks of BlueZ's discovery: `Adapter1.SetDiscoveryFilter`'s `UUIDs`, `RSSI` and
/// `DuplicateData`.
struct DiscoveryFilter: Sendable, Hashable {
    /// Lowercase 128-bit UUIDs, sorted; empty for any device.
    var uuids: [String] = []
    var rssi: Int?
    var duplicates = false

    /// No filter: every device, no duplicates (a `device.scan`).
    static let none = DiscoveryFilter()

    /// The filter BlueZ can apply for all of `filters` at once (BlueZ holds one per D-Bus client): the union of the
    /// UUIDs (any device as soon as one session wants any), the weakest RSSI (none as soon as one session has none),
    /// duplicates when any session wants them. Each session then filters for itself.
    static func merged(_ filters: [DiscoveryFilter]) -> DiscoveryFilter {
        guard !filters.isEmpty else { return .none }
        var merged = DiscoveryFilter()
        merged.uuids = filters.contains { $0.uuids.isEmpty } ? [] : Array(Set(filters.flatMap(\.uuids))).sorted()
        let thresholds = filters.map(\.rssi)
        merged.rssi = thresholds.contains(nil) ? nil : thresholds.compactMap { $0 }.min()
        merged.duplicates = filters.contains(where: \.duplicates)
        return merged
    }

    /// The `a{sv}` of `SetDiscoveryFilter` (empty for `.none`, which clears the filter).
    var dbusValue: DBusValue {
        guard self != .none else { return .propertyMap([:]) }
        var map: [String: DBusValue] = ["Transport": .string("le")]
        if !uuids.isEmpty { map["UUIDs"] = .array(.string, uuids.map(DBusValue.string)) }
        if let rssi { map["RSSI"] = .int16(Int16(clamping: rssi)) }
        if duplicates { map["DuplicateData"] = .boolean(true) }
        return .propertyMap(map)
    }
}

/// The discovery sessions this process holds, per adapter: one BlueZ discovery shared by every scan and discovery.
struct DiscoveryState: Sendable {
    var sessions: [UInt64: (adapter: DBusObjectPath, filter: DiscoveryFilter)] = [:]
    var nextID: UInt64 = 1
    /// The filter last sent to each adapter (BlueZ may keep it after the discovery stops).
    var applied: [DBusObjectPath: DiscoveryFilter] = [:]

    func filters(on adapter: DBusObjectPath) -> [DiscoveryFilter] {
        sessions.values.filter { $0.adapter == adapter }.map(\.filter)
    }
}

/// Discovery shared between concurrent `device.scan`s and `device.discover`s.
extension BlueZClient {
    /// Holds a discovery session on the adapter named `adapter` while started: the first session of the adapter calls
    /// `Adapter1.StartDiscovery`, the last one to end `StopDiscovery`; whenever the merged filter of the sessions
    /// changes, `SetDiscoveryFilter` goes out first (BlueZ gives each D-Bus client one session and one filter, so
    /// each session still filters what it hears itself). Fails when BlueZ leaves the bus or refuses the filter.
    func discoverySession(
        adapter: String, filter: DiscoveryFilter, callTimeout: Duration
    ) -> Signal<Never, DeviceError> {
        Signal { observer, lifetime in
            let adapterPath: DBusObjectPath
            do throws(DeviceError) {
                guard let found = try self.availableTree().adapter(named: adapter) else {
                    throw .unavailable("BlueZ has no adapter \(adapter)")
                }
                adapterPath = found.path
            } catch {
                return observer.send(error: error)
            }
            lifetime += self.observe { event in
                if case .vanished = event { observer.send(error: .unavailable("\(BlueZ.serviceName) left the bus")) }
            }
            let (id, isFirst, newFilter) = self.state.withLock { state -> (UInt64, Bool, DiscoveryFilter?) in
                let id = state.discovery.nextID
                state.discovery.nextID += 1
                let isFirst = state.discovery.filters(on: adapterPath).isEmpty
                state.discovery.sessions[id] = (adapterPath, filter)
                let merged = DiscoveryFilter.merged(state.discovery.filters(on: adapterPath))
                let applied = state.discovery.applied[adapterPath] ?? .none
                // Starting: send it unless neither it nor what BlueZ may still hold is a filter.
                let send = isFirst ? merged != .none || applied != .none : merged != applied
                if send { state.discovery.applied[adapterPath] = merged }
                return (id, isFirst, send ? merged : nil)
            }
            lifetime.observeEnded { self.endDiscoverySession(id, adapterPath: adapterPath, callTimeout: callTimeout) }
            if let newFilter {
                lifetime += self.call(
                    adapterPath, BlueZ.adapterInterface, "SetDiscoveryFilter", [newFilter.dbusValue],
                    timeout: callTimeout
                ).startWithFailed { observer.send(error: $0) }
            }
            if isFirst {
                lifetime += self.call(adapterPath, BlueZ.adapterInterface, "StartDiscovery", timeout: callTimeout)
                    .startWithFailed { error in
                        // Another client of ours may hold a session already; anything else ends the session.
                        if error.bluezName != DeviceError.inProgress { observer.send(error: error) }
                    }
            }
        }
    }

    private func endDiscoverySession(_ id: UInt64, adapterPath: DBusObjectPath, callTimeout: Duration) {
        let (isLast, newFilter) = state.withLock { state -> (Bool, DiscoveryFilter?) in
            // Gone already when BlueZ restarted (the state was reset).
            guard state.discovery.sessions.removeValue(forKey: id) != nil else { return (false, nil) }
            let remaining = state.discovery.filters(on: adapterPath)
            guard !remaining.isEmpty else { return (true, nil) }
            let merged = DiscoveryFilter.merged(remaining)
            guard merged != state.discovery.applied[adapterPath] ?? .none else { return (false, nil) }
            state.discovery.applied[adapterPath] = merged
            return (false, merged)
        }
        if let newFilter {
            var message = DBusMessage.methodCall(
                destination: BlueZ.serviceName, path: adapterPath, interface: BlueZ.adapterInterface,
                member: "SetDiscoveryFilter", body: [newFilter.dbusValue])
            message.flags.insert(.noReplyExpected)
            _ = try? connection.send(message)
        }
        guard isLast else { return }
        var stop = DBusMessage.methodCall(
            destination: BlueZ.serviceName, path: adapterPath, interface: BlueZ.adapterInterface,
            member: "StopDiscovery")
        stop.flags.insert(.noReplyExpected)
        _ = try? connection.send(stop)
    }

    /// `device.scan`: discovers for `duration` in a session without filter, then sends the devices heard during that
    /// time (with the last RSSI heard). Filtering by UUID and RSSI is the caller's.
    func scan(adapter: String, duration: Duration, callTimeout: Duration) -> Signal<[BlueZDevice], DeviceError> {
        Signal { observer, lifetime in
            let heard = Locked([DBusObjectPath: Int]())
            lifetime += self.observe { event in
                switch event {
                case .propertiesChanged(let change) where change.interface == BlueZ.deviceInterface:
                    if let rssi = change.changed["RSSI"]?.int16Value {
                        heard.withLock { $0[change.path] = Int(rssi) }
                    }
                case .interfacesAdded(let added):
                    if let rssi = added.interfaces[BlueZ.deviceInterface]?["RSSI"]?.int16Value {
                        heard.withLock { $0[added.objectPath] = Int(rssi) }
                    }
                default:
                    break
                }
            }
            lifetime += self.discoverySession(adapter: adapter, filter: .none, callTimeout: callTimeout)
                .startWithFailed { observer.send(error: $0) }
            lifetime += self.scheduler.schedule(after: duration) {
                let rssis = heard.withLock { $0 }
                let tree = self.tree
                let devices = rssis.keys.sorted().compactMap { path -> BlueZDevice? in
                    guard let device = tree.device(at: path) else { return nil }
                    return device.withRSSI(rssis[path])
                }
                observer.send(value: devices)
                observer.sendCompleted()
            }
        }
    }
}

extension BlueZDevice {
    /// The same device with the RSSI a scan heard.
    func withRSSI(_ rssi: Int?) -> BlueZDevice {
        BlueZDevice(
            path: path, adapterPath: adapterPath, address: address, name: name, rssi: rssi ?? self.rssi,
            isConnected: isConnected, isPaired: isPaired, servicesResolved: servicesResolved, uuids: uuids)
    }
}
