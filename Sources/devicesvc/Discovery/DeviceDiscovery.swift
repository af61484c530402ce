import ContextBusDBus
import ContextBusReactive
import ContextBusServer
import ContextBusSupport
import ContextBusWire
import Foundation

/// One `device.discover`: a discovery session on the adapter (shared with every other scan and discovery), and the
/// `device.advertisement` events of the devices it hears.
///
/// An advertisement is BlueZ reporting a device during the discovery: `InterfacesAdded` of a device it had not known,
/// or `PropertiesChanged` of its `RSSI`, `ManufacturerData`, `ServiceData`, `TxPower`, `Name` or `UUIDs`. Each event
/// carries the device's whole advertised data as BlueZ holds it then (`AdvertisedData`), and the BTHome values its
/// service data holds. Without `duplicates`, a device's event is sent when it is first heard and whenever its data
/// (the RSSI aside) changed; with it, on every report. With `record`, each decoded value is saved once per
/// advertised payload (`fcd2/temperature`).
final class DeviceDiscovery: Sendable {
    let id: Int64
    let params: DiscoverParams
    let adapter: String
    let bluez: BlueZClient
    /// Where the events go.
    let send: @Sendable (any RPCEventPayload) -> Void
    /// Where decoded values are recorded (`record: true`).
    let recorder: WatchRecorder?
    let log: ServiceLog?
    private let state = Locked(State())

    private struct State {
        var lastSent: [DBusObjectPath: AdvertisedData] = [:]
        var lastRecorded: [DBusObjectPath: Data] = [:]
        var counts = DiscoveryCounts()
        var isEnded = false
        var lifetime: [any Disposable] = []
    }

    init(
        id: Int64, params: DiscoverParams, adapter: String, bluez: BlueZClient, recorder: WatchRecorder?,
        log: ServiceLog?, send: @escaping @Sendable (any RPCEventPayload) -> Void
    ) {
        self.id = id
        self.params = params
        self.adapter = adapter
        self.bluez = bluez
        self.recorder = recorder
        self.log = log
        self.send = send
    }

    /// Starts the session and the events; `onEnd` is called once when the discovery ends by itself (its `seconds`, or
    /// BlueZ failing it), before `device.discoveryEnded` is sent: a client that reads the event and then asks
    /// `device.undiscover` finds the discovery gone (404), never still running.
    func start(
        scheduler: any Scheduler, callTimeout: Duration, onEnd: @escaping @Sendable () -> Void
    ) {
        let filter = DiscoveryFilter(
            uuids: params.uuids.map(\.canonical).sorted(), rssi: params.rssi, duplicates: params.duplicates)
        var disposables: [any Disposable] = []
        disposables.append(bluez.observe { [weak self] event in self?.handle(event) })
        disposables.append(
            bluez.discoverySession(adapter: adapter, filter: filter, callTimeout: callTimeout).startWithFailed {
                [weak self] error in
                self?.end(error: error.description, onEnd: onEnd)
            })
        if params.seconds > 0 {
            disposables.append(
                scheduler.schedule(after: .milliseconds(Int64(params.seconds * 1000))) { [weak self] in
                    self?.end(error: nil, onEnd: onEnd)
                })
        }
        let ended = state.withLock { state -> Bool in
            state.lifetime += disposables
            return state.isEnded
        }
        if ended { stop() }
    }

    /// Ends the discovery (`device.undiscover`, the connection closing): no event.
    ///
    /// - Returns: what it sent and skipped.
    @discardableResult
    func stop() -> DiscoveryCounts {
        let (counts, disposables) = state.withLock { state -> (DiscoveryCounts, [any Disposable]) in
            state.isEnded = true
            defer { state.lifetime = [] }
            return (state.counts, state.lifetime)
        }
        for disposable in disposables { disposable.dispose() }
        return counts
    }

    private func end(error: String?, onEnd: @Sendable () -> Void) {
        let first = state.withLock { state -> DiscoveryCounts? in
            guard !state.isEnded else { return nil }
            state.isEnded = true
            return state.counts
        }
        guard let counts = first else { return }
        onEnd()
        send(
            DiscoveryEndedEvent(
                discovery: id, advertisements: counts.advertisements, skipped: counts.skipped, error: error))
        stop()
    }

    // MARK: - Advertisements (delivery queue)

    private static let advertisedProperties: Set<String> = [
        "RSSI", "ManufacturerData", "ServiceData", "TxPower", "Name", "UUIDs",
    ]

    private func handle(_ event: BlueZEvent) {
        let path: DBusObjectPath
        switch event {
        case .interfacesAdded(let added) where added.interfaces[BlueZ.deviceInterface] != nil:
            path = added.objectPath
        case .propertiesChanged(let change)
        where change.interface == BlueZ.deviceInterface
            && !Self.advertisedProperties.isDisjoint(with: change.changed.keys):
            path = change.path
        default:
            return
        }
        let tree = bluez.tree
        guard let device = tree.device(at: path), device.adapterPath.lastElement == adapter,
            let address = BluetoothAddress(device.address),
            let properties = tree.properties(of: BlueZ.deviceInterface, at: path)
        else { return }
        let data = AdvertisedData(properties: properties)
        guard let rssi = data.rssi, data.matches(params.uuids), rssi >= params.rssi else { return }
        var decoded: [DecodedValue] = []
        var skipped = data.malformed
        var bthome: Data?
        if let payload = data.serviceData[BTHome.serviceUUID.canonical] {
            let read = BTHome.decode(payload)
            decoded = read.values
            bthome = payload
            if let reason = read.skipped {
                skipped += 1
                log?.debug("discovery \(id): \(address): \(reason)")
            }
        }
        let (sends, records) = state.withLock { state -> (Bool, Bool) in
            guard !state.isEnded else { return (false, false) }
            if !params.duplicates, let last = state.lastSent[path], last.advertisesTheSame(as: data) {
                return (false, false)
            }
            state.lastSent[path] = data
            state.counts.advertisements += 1
            state.counts.skipped += skipped
            guard params.record, let bthome, !decoded.isEmpty, state.lastRecorded[path] != bthome else {
                return (true, false)
            }
            state.lastRecorded[path] = bthome
            return (true, true)
        }
        guard sends else { return }
        send(
            AdvertisementEvent(
                discovery: id, address: address, name: data.name, rssi: rssi, txPower: data.txPower,
                manufacturerData: data.manufacturerData, serviceData: data.serviceData,
                services: data.services.compactMap(BluetoothUUID.init), decoded: decoded))
        if records, let recorder, let bthome {
            let prefix = AdvertisedData.shortForm(BTHome.serviceUUID.canonical)
            for value in decoded {
                recorder.add(
                    ChainRecording.Reading(
                        characteristic: "\(prefix)/\(value.name)", value: bthome, time: Date(),
                        measurement: Quantity(number: value.number, unit: value.unit)),
                    connected: device.isConnected, of: address, source: "discovery \(id)")
            }
        }
    }
}
