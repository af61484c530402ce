import ContextBusReactive
import ContextBusServer
import ContextBusSupport
import ContextBusWire

/// The discoveries running now, by id, with the connection each belongs to.
final class DiscoveryRegistry: Sendable {
    private let state = Locked((nextID: Int64(1), running: [Int64: (discovery: DeviceDiscovery, owner: UInt64)]()))

    func makeID() -> Int64 {
        state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
    }

    func add(_ discovery: DeviceDiscovery, owner: UInt64) {
        state.withLock { $0.running[discovery.id] = (discovery, owner) }
    }

    /// Removes discovery `id` if `owner`'s (any owner's when `nil`).
    func remove(_ id: Int64, owner: UInt64?) -> DeviceDiscovery? {
        state.withLock { state in
            guard let entry = state.running[id], owner == nil || entry.owner == owner else { return nil }
            state.running[id] = nil
            return entry.discovery
        }
    }

    var all: [DeviceDiscovery] { state.withLock { $0.running.values.map(\.discovery) } }
}

/// `device.discover`, `device.undiscover` and `device.services`.
extension DeviceService {
    /// `device.discover`: answers with the discovery's id, then sends `device.advertisement` events until
    /// `device.undiscover`, its `seconds`, or the connection closing.
    func discover(_ params: DiscoverParams, request: BusRequest, responder: Responder<DeviceDiscover>) {
        let adapter: String
        do {
            adapter = try checkedAdapter(params.adapter)
        } catch {
            return responder.fail(error)
        }
        let connection = request.connection
        let id = discoveries.makeID()
        let discovery = DeviceDiscovery(
            id: id, params: params, adapter: adapter, bluez: bluez, recorder: params.record ? watchRecorder : nil,
            log: log, send: { event in connection.send(event) })
        discoveries.add(discovery, owner: connection.id)
        responder.succeed(DiscoverResult(discovery: id))
        let discoveries = discoveries
        discovery.start(scheduler: scheduler, callTimeout: configuration.chains.stepTimeout) {
            _ = discoveries.remove(id, owner: nil)
        }
        connection.lifetime += AnyDisposable { discoveries.remove(id, owner: nil)?.stop() }
    }

    /// `device.undiscover`: `404` for a discovery that is not this connection's (or has ended).
    func undiscover(_ params: DiscoveryReference, request: BusRequest) throws(RPCError) -> DiscoveryCounts {
        guard let discovery = discoveries.remove(params.discovery, owner: request.connection.id) else {
            throw .notFound("no discovery \(params.discovery) is running on this connection")
        }
        return discovery.stop()
    }

    /// `device.services`: the GATT database BlueZ resolved for the device: `404` for a device BlueZ does not know,
    /// `503` for one it holds no services of (never connected).
    func services(_ params: ServicesParams) throws(RPCError) -> ServicesResult {
        let adapter = try checkedAdapter(params.adapter)
        let tree = try availableTree()
        guard let device = tree.device(params.address, onAdapter: adapter) else {
            throw DeviceError.unknownDevice(address: params.address.string).rpcError
        }
        let services = tree.services(onDevice: device.path)
        guard !services.isEmpty else {
            throw RPCError(
                code: .unavailable,
                message: "BlueZ holds no GATT services of \(params.address) (connect to it once to resolve them)")
        }
        let characteristics = tree.characteristics(onDevice: device.path)
        return ServicesResult(
            services: services.compactMap { service in
                guard let uuid = BluetoothUUID(service.uuid) else { return nil }
                return ServiceInfo(
                    uuid: uuid, primary: service.isPrimary,
                    characteristics: characteristics.filter { $0.servicePath == service.path }.compactMap {
                        characteristic in
                        guard let uuid = BluetoothUUID(characteristic.uuid) else { return nil }
                        return CharacteristicInfo(
                            uuid: uuid, flags: characteristic.flags,
                            descriptors: tree.descriptors(of: characteristic.path).compactMap {
                                BluetoothUUID($0.uuid)
                            })
                    })
            })
    }
}
