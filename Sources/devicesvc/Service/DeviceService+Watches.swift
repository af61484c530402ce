import ContextBusReactive
import ContextBusServer
import ContextBusWire

/// `device.watch` and `device.unwatch`.
extension DeviceService {
    /// `device.watch`: checks the device (and, when BlueZ holds its GATT database, the characteristics), answers with
    /// the watch's id, then starts it on the device's shared link; the watch ends with `device.unwatch` or when the
    /// client's connection closes.
    func watch(_ params: WatchParams, request: BusRequest, responder: Responder<DeviceWatch>) {
        let adapter: String
        do {
            adapter = try checkedAdapter(params.adapter)
            try checkWatchable(params, adapter: adapter)
        } catch {
            return responder.fail(error)
        }
        let connection = request.connection
        let id = watches.makeID()
        var sinks: [any WatchSink] = [ConnectionWatchSink(connection: connection)]
        if params.record { sinks.append(watchRecorder.sink(source: "watch \(id)")) }
        responder.succeed(DeviceWatchResult(watch: id))
        log.debug("watch \(id): \(params.address) \(params.notify.map(\.string).joined(separator: ","))")
        watches.start(
            id, address: params.address, adapter: adapter, characteristics: params.notify, policy: params.reconnect,
            owner: connection.id, sink: sinks.count == 1 ? sinks[0] : WatchSinks(sinks: sinks))
        connection.lifetime += AnyDisposable { [watches] in watches.stop(id, owner: connection.id) }
    }

    /// `device.unwatch`: `404` for a watch that is not this connection's.
    func unwatch(_ params: WatchReference, request: BusRequest) throws(RPCError) -> EmptyObject {
        guard watches.stop(params.watch, owner: request.connection.id) else {
            throw .notFound("no watch \(params.watch) on this connection")
        }
        return EmptyObject()
    }

    /// The adapter a request names (else `--adapter`): `404` when BlueZ has no such adapter, `503` when BlueZ is away.
    func checkedAdapter(_ name: String?) throws(RPCError) -> String {
        let adapter = name ?? configuration.chains.adapter
        let tree = try availableTree()
        guard tree.adapter(named: adapter) != nil else {
            throw .notFound("BlueZ has no adapter \(adapter)", data: .object(["adapter": .string(adapter)]))
        }
        return adapter
    }

    /// `404` for a device BlueZ does not know, or a characteristic its resolved GATT database lacks; `-32602` for one
    /// that can neither notify nor indicate. A device whose database BlueZ does not hold yet is checked on connecting.
    private func checkWatchable(_ params: WatchParams, adapter: String) throws(RPCError) {
        let tree = try availableTree()
        guard let device = tree.device(params.address, onAdapter: adapter) else {
            throw DeviceError.unknownDevice(address: params.address.string).rpcError
        }
        guard !tree.characteristics(onDevice: device.path).isEmpty else { return }
        for (index, uuid) in params.notify.enumerated() {
            guard let characteristic = tree.characteristic(uuid, onDevice: device.path) else {
                throw DeviceError.unknownCharacteristic(address: params.address.string, uuid: uuid.string).rpcError
            }
            guard characteristic.flags.contains("notify") || characteristic.flags.contains("indicate") else {
                throw .invalidParams(
                    field: "notify[\(index)]",
                    message:
                        "\(uuid) can neither notify nor indicate (flags: \(characteristic.flags.joined(separator: ",")))"
                )
            }
        }
    }
}
