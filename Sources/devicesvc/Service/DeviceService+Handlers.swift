import ContextBusDBus
import ContextBusReactive
import ContextBusServer
import ContextBusSupport
import ContextBusWire
import Foundation

/// The `device.*` handlers.
extension DeviceService {
    /// Registers one handler per `device.*` method.
    ///
    /// `device.run` is `.inOrder`: a connection's chains join their device's queue in the order they arrived
    /// (PROTOCOL.md: chains for one device run in arrival order). The handler holds the connection's turn only until
    /// its chain is queued, not while it runs, so pipelined chains on different devices still run at once.
    func registerHandlers() {
        server.register(DeviceAdapters.self) { [self] _, _ in try adapters() }
        server.register(DeviceList.self) { [self] _, params in try list(params) }
        server.register(DeviceScan.self) { [self] _, params in try await scan(params) }
        server.register(DeviceRecordedRun.self, ordering: .inOrder, cancellation: .cooperative) {
            [self] request, params, responder in
            run(params, request: request, responder: responder)
        }
        server.register(DeviceCancel.self) { [self] _, params in
            guard runner.cancel(chain: params.chain) else {
                throw RPCError.notFound("no chain \(params.chain) is queued or running")
            }
            return EmptyObject()
        }
        server.register(DeviceSubscribe.self) { [self] request, params, responder in
            subscribe(params, request: request, responder: responder)
        }
        server.register(DeviceWatch.self) { [self] request, params, responder in
            watch(params, request: request, responder: responder)
        }
        server.register(DeviceUnwatch.self) { [self] request, params in try unwatch(params, request: request) }
        server.register(DeviceDiscover.self) { [self] request, params, responder in
            discover(params, request: request, responder: responder)
        }
        server.register(DeviceUndiscover.self) { [self] request, params in try undiscover(params, request: request) }
        server.register(DeviceServices.self) { [self] _, params in try services(params) }
    }

    // MARK: - Adapters and devices

    func adapters() throws(RPCError) -> AdaptersResult {
        let tree = try availableTree()
        return AdaptersResult(
            adapters: tree.adapters.compactMap { adapter in
                BluetoothAddress(adapter.address).map {
                    AdapterInfo(name: adapter.name, address: $0, powered: adapter.isPowered)
                }
            })
    }

    func list(_ params: ListParams) throws(RPCError) -> DevicesResult {
        let tree = try availableTree()
        if let adapter = params.adapter, tree.adapter(named: adapter) == nil {
            throw .notFound("no adapter \(adapter)", data: .object(["adapter": .string(adapter)]))
        }
        return DevicesResult(devices: tree.devices(onAdapter: params.adapter).compactMap(\.info))
    }

    func scan(_ params: ScanParams) async throws -> DevicesResult {
        _ = try availableTree()
        let duration = Duration.milliseconds(Int64(min(params.seconds, 3600) * 1000))
        let devices: [BlueZDevice]
        do {
            devices = try await bluez.scan(
                adapter: configuration.chains.adapter, duration: duration, callTimeout: configuration.chains.stepTimeout
            ).value
        } catch {
            guard case .failed(let failure) = error else { throw CancellationError() }
            throw failure.rpcError
        }
        let wanted = Set(params.uuids.map(\.canonical))
        return DevicesResult(
            devices: devices.filter { device in
                (wanted.isEmpty || !wanted.isDisjoint(with: device.uuids))
                    && (params.rssi.map { threshold in (device.rssi ?? Int.min) >= threshold } ?? true)
            }.compactMap(\.info))
    }

    /// The tree, or `503` when BlueZ is not on the bus.
    func availableTree() throws(RPCError) -> BlueZObjectTree {
        do {
            return try bluez.availableTree()
        } catch {
            throw error.rpcError
        }
    }

    // MARK: - Chains

    /// Runs a chain: `device.step` events as it goes, then its result or error; recorded when asked.
    ///
    /// Returns once the chain has joined its device's queue (starting the chain's signal takes its place there), which
    /// ends the connection's `.inOrder` turn; the answer comes later, through `responder`.
    func run(_ params: RunParams, request: BusRequest, responder: Responder<DeviceRecordedRun>) {
        if let adapter = params.adapter {
            do {
                _ = try checkedAdapter(adapter)
            } catch {
                return responder.fail(error)
            }
        }
        let chain = runner.makeChain(params)
        let connection = request.connection
        let recording =
            params.record
            ? Locked(makeRecording(chain: chain.id, address: params.address, adapter: params.adapter)) : nil
        let results = Locked([StepResult]())
        // bus.cancel, or the client going away, cancels the chain (which still disconnects).
        request.onCancel { chain.control.cancel() }
        log.debug("chain \(chain.id): \(params.steps.count) steps on \(params.address)")
        counters.chainStarted()
        chain.signal.start { [self] event in
            switch event {
            case .value(let progress):
                connection.send(progress.event(chain: chain.id))
                if case .finished(let result) = progress {
                    results.withLock { $0.append(result) }
                    if result.operation == .connect { counters.linkConnected() }
                }
                recording?.withLock { $0.add(progress, steps: params.steps, at: Date()) }
            case .completed:
                counters.chainEnded(failingWith: nil)
                let result = RunResult(chain: chain.id, results: results.withLock { $0 })
                finish(recording) { recorded in responder.succeed(RecordedRunResult(run: result, recording: recorded)) }
            case .failed(let error):
                log.debug("\(error)")
                counters.chainEnded(failingWith: error.rpcError)
                finish(recording) { recorded in responder.fail(error.rpcError.adding(recorded)) }
            case .interrupted:
                let error = RPCError.cancelled("chain \(chain.id) was interrupted")
                counters.chainEnded(failingWith: error)
                responder.fail(error)
            }
        }
    }

    private func makeRecording(chain: String, address: BluetoothAddress, adapter: String?) -> ChainRecording {
        ChainRecording(
            chain: chain, address: address, name: nil, connected: false, lastSeen: Date(), readings: [],
            adapter: adapter)
    }

    /// Saves the recording (if any) with the device's current state, then answers.
    private func finish(
        _ recording: Locked<ChainRecording>?, answer: @escaping @Sendable (RecordingOutcome?) -> Void
    ) {
        guard let recording else { return answer(nil) }
        var snapshot = recording.withLock { $0 }
        let device = bluez.tree.device(snapshot.address, onAdapter: snapshot.adapter ?? configuration.chains.adapter)
        snapshot.name = device?.name
        snapshot.connected = device?.isConnected ?? false
        snapshot.lastSeen = Date()
        let recorder = recorder
        let log = log
        let counters = counters
        Task {
            let failure = await recorder.record(snapshot)
            counters.recorded(succeeded: failure == nil)
            if let failure {
                log.warning(
                    "chain \(snapshot.chain): recording failed: \(failure)",
                    ["chain": .string(snapshot.chain), "address": .string(snapshot.address.string)])
            }
            answer(RecordingOutcome(error: failure))
        }
    }

    // MARK: - Subscriptions

    /// `device.subscribe`: answers, then sends `device.event` for connection changes and values until the client
    /// goes away.
    func subscribe(
        _ params: DeviceSubscribeParams, request: BusRequest, responder: Responder<DeviceSubscribe>
    ) {
        let id = subscriptionIDs.withLock { next -> Int64 in
            defer { next += 1 }
            return next
        }
        let connection = request.connection
        let bluez = bluez
        responder.succeed(DeviceSubscribeResult(subscription: id))
        connection.lifetime += bluez.observe { event in
            // Every `Value` BlueZ broadcasts, our own reads' too (docs/protocol.md, "device.subscribe").
            let change: DBusPropertiesChanged
            switch event {
            case .propertiesChanged(let changed), .readEcho(let changed): change = changed
            default: return
            }
            guard let deviceEvent = DeviceService.deviceEvent(for: change, in: bluez.tree, subscription: id),
                params.address == nil || params.address == deviceEvent.address
            else { return }
            connection.send(deviceEvent)
        }
    }

    /// The `device.event` a property change amounts to, if any.
    static func deviceEvent(
        for change: DBusPropertiesChanged, in tree: BlueZObjectTree, subscription: Int64
    ) -> DeviceEvent? {
        switch change.interface {
        case BlueZ.deviceInterface:
            guard let connected = change.changed["Connected"]?.boolValue,
                let address = tree.device(at: change.path).flatMap({ BluetoothAddress($0.address) })
            else { return nil }
            return DeviceEvent(
                subscription: subscription, address: address, kind: connected ? .connected : .disconnected)
        case BlueZ.characteristicInterface:
            guard let bytes = change.changed["Value"]?.bytesValue,
                let characteristic = tree.characteristic(at: change.path),
                let devicePath = tree.devicePath(containing: change.path),
                let address = tree.device(at: devicePath).flatMap({ BluetoothAddress($0.address) })
            else { return nil }
            return DeviceEvent(
                subscription: subscription, address: address, kind: .value,
                characteristic: BluetoothUUID(characteristic.uuid), value: Data(bytes))
        default:
            return nil
        }
    }
}

extension DeviceError {
    /// The answer to a request that is not a chain (`device.scan`, `device.list`).
    var rpcError: RPCError {
        switch self {
        case .unavailable: return RPCError(code: .unavailable, message: description)
        case .noReply: return .timeout(description)
        case .unknownDevice, .unknownCharacteristic, .unknownDescriptor: return .notFound(description)
        case .bluez(let error):
            return RPCError(code: .deviceError, message: description, data: .object(["bluez": .string(error.name)]))
        case .linkLost, .servicesNotResolved:
            return RPCError(code: .deviceError, message: description)
        }
    }
}
