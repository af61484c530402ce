import ContextBusDBus
import ContextBusReactive
import ContextBusServer
import ContextBusSupport
import Dispatch

/// The device service: BlueZ on the system bus, the chain runner, and the bus server that answers
/// `device.*` requests.
///
/// ```
///  clients ──▶ BusServer (device.sock) ──▶ handlers ──▶ ChainRunner ──▶ BlueZClient ──▶ system bus
///                                              │              └─ record: true ─▶ StoreRecorder ──▶ store.sock
///                                              └─ device.subscribe ◀── BlueZClient observers
/// ```
///
/// `start` connects to the system bus and listens; BlueZ need not be running (requests answer `503` until it
/// appears). `stop` cancels every chain, waits (bounded) until each has disconnected and answered, then
/// closes the server and the bus connection.
final class DeviceService: Sendable {
    let configuration: DeviceServiceConfiguration
    let log: ServiceLog
    let connection: DBusConnection
    let bluez: BlueZClient
    let runner: ChainRunner
    let server: BusServer
    let recorder: StoreRecorder
    let scheduler: QueueScheduler
    /// Every watch and the links they share (`device.watch`, `--watch`).
    let watches: WatchManager
    /// Saves what watches and discoveries with `record: true` receive, in batches.
    let watchRecorder: WatchRecorder
    /// The `device.discover`s running now.
    let discoveries = DiscoveryRegistry()
    let subscriptionIDs = Locked<Int64>(1)
    /// Chains by outcome, links, recordings (`device.stats`, the metrics).
    let counters = DeviceCounters()
    /// Readiness, the watchdog and the metrics (DeviceService+Operations.swift).
    let operations: ServiceOperations
    /// Observations that last as long as the service.
    private let observations = Locked<[any Disposable]>([])

    private init(
        configuration: DeviceServiceConfiguration, log: ServiceLog, connection: DBusConnection, bluez: BlueZClient,
        scheduler: QueueScheduler
    ) {
        self.configuration = configuration
        self.log = log
        self.connection = connection
        self.bluez = bluez
        self.scheduler = scheduler
        // The runner asks the watches whether they hold a device's link, and the watches use the runner's queues.
        let watchesBox = Locked<WatchManager?>(nil)
        let runner = ChainRunner(
            backend: bluez, scheduler: scheduler, settings: configuration.chains, decoders: configuration.decoders,
            onRetry: { chain, step, error, retry in
                log.info("chain \(chain) step \(step): \(error); retry \(retry)")
            },
            isLinkHeld: { address, adapter in
                watchesBox.withLock { $0 }?.holdsLink(address, adapter: adapter) ?? false
            })
        self.runner = runner
        let watches = WatchManager(
            environment: WatchLink.Environment(
                bluez: bluez, turns: runner.connections, scheduler: scheduler, decoders: configuration.decoders,
                resolveTimeout: configuration.chains.resolveTimeout, callTimeout: configuration.chains.stepTimeout,
                random: { Double.random(in: 0..<1) }, log: log,
                onReconnectAttempt: { [counters] in counters.reconnectAttempted() }),
            runner: runner, cleanupTimeout: configuration.chains.cleanupTimeout)
        self.watches = watches
        watchesBox.withLock { $0 = watches }
        var serverConfiguration = BusServer.Configuration(
            name: "devicesvc", version: ContextBusVersion.string, socketPath: configuration.socketPath)
        configuration.access.apply(to: &serverConfiguration)
        serverConfiguration.onHandlerError = { method, error in log.error("\(method): \(error)") }
        server = BusServer(configuration: serverConfiguration)
        operations = ServiceOperations(name: "devicesvc", options: configuration.operations, log: log)
        recorder = StoreRecorder(socketPath: configuration.storeSocketPath)
        let adapter = configuration.chains.adapter
        watchRecorder = WatchRecorder(
            recorder: recorder, scheduler: scheduler, log: log,
            name: { [bluez] address in bluez.tree.device(address, onAdapter: adapter)?.name })
    }

    /// Connects to the system bus, starts following BlueZ, registers the handlers and starts listening.
    ///
    /// - Throws: `DBusConnectionError` when the system bus cannot be reached, `ListenerError` when the socket
    ///   is taken by a live service.
    static func start(configuration: DeviceServiceConfiguration, log: ServiceLog) async throws -> DeviceService {
        let connection = try await DBusConnection.connect(to: configuration.busAddress)
        let scheduler = QueueScheduler(name: "devicesvc.timers")
        let bluez: BlueZClient
        do {
            bluez = try await BlueZClient.start(on: connection, scheduler: scheduler)
        } catch {
            connection.close()
            throw error
        }
        if connection.trackedOwner(of: BlueZ.serviceName) != nil || bluez.hasOwner {
            _ = await bluez.waitUntilAvailable(timeout: .seconds(5))
        }
        let service = DeviceService(
            configuration: configuration, log: log, connection: connection, bluez: bluez, scheduler: scheduler)
        service.watchBlueZ()
        service.registerHandlers()
        service.registerOperationsHandlers()
        service.startServiceWatches()
        do {
            try service.server.start()
        } catch {
            bluez.stop()
            connection.close()
            throw error
        }
        log.info(
            "listening on \(configuration.socketPath); adapter \(configuration.chains.adapter)",
            ["socket": .string(configuration.socketPath), "adapter": .string(configuration.chains.adapter)])
        service.operations.ready(service.server, status: service.statusLine)
        return service
    }

    /// Cancels every chain (each still disconnects), waits up to `timeout` for them to end, then stops serving.
    func stop(timeout: Duration = .seconds(10)) async {
        operations.stopping(status: "stopping: cancelling \(runner.activeCount) chains")
        runner.cancelAll()
        for discovery in discoveries.all { discoveries.remove(discovery.id, owner: nil)?.stop() }
        await watches.stopAll()
        watchRecorder.flushAll()
        let deadline = ContinuousClock.now + timeout
        while runner.activeCount > 0, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        await server.shutdown(gracefully: true, timeout: .seconds(2))
        for observation in observations.withLock({ $0 }) { observation.dispose() }
        bluez.stop()
        connection.close()
        await recorder.close()
    }

    /// Starts the `--watch` watches: they live as long as the service and are recorded into the store.
    private func startServiceWatches() {
        for watch in configuration.watches {
            let id = watches.makeID()
            watches.start(
                id, address: watch.address, adapter: configuration.chains.adapter,
                characteristics: watch.characteristics, policy: .standard, owner: nil,
                sink: watchRecorder.sink(source: "watch \(id)"))
            log.info(
                "watch \(id): \(watch.address) \(watch.characteristics.map(\.string).joined(separator: ",")), recorded")
        }
    }

    /// Logs BlueZ appearing and leaving, and says so in the service manager's status.
    private func watchBlueZ() {
        let log = log
        let observation = bluez.observe { [self] event in
            switch event {
            case .appeared:
                log.info("BlueZ is on the bus")
                operations.status(statusLine)
            case .vanished:
                log.warning("BlueZ left the bus; device requests answer 503 until it returns")
                operations.status(statusLine)
            default: break
            }
        }
        observations.withLock { $0.append(observation) }
        if !bluez.isAvailable { log.warning("BlueZ is not on the bus yet; waiting for it") }
    }
}
