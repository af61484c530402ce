import ContextBusClient
import ContextBusServer
import ContextBusSupport
import Dispatch
import Foundation

/// The fleet bridge of one gateway (docs/fleet.md):
///
/// ```
///  storesvc ── store.replicaChanges ──▶ Outbound ── js_Publish (msg id gateway:txn) ──▶ JetStream
///           ◀── store.save (origin) ──── Inbound  ◀── StreamReader ctxbus.<fleet>.*.txn ──┘
///  fleet.sock ◀── fleet.status (BusServer)
/// ```
///
/// `start` connects to storesvc (waiting for it), registers the store as the gateway, connects to NATS (in the
/// background when the server is down), listens on its socket, and starts the two bridge threads once the
/// stream exists. `stop` stops them and the server.
final class FleetService: Sendable {
    let configuration: FleetServiceConfiguration
    let log: ServiceLog
    let store: StoreLink
    let jetStream: JetStream
    let counters = FleetCounters()
    let server: BusServer
    let outbound: Outbound
    let inbound: Inbound
    /// Readiness, the watchdog and the metrics (`FleetMetrics`).
    let operations: ServiceOperations
    private let observations = Locked<[any Disposable]>([])
    private let starter = DispatchSemaphore(value: 0)
    private let isStopping = AtomicFlag()

    private init(
        configuration: FleetServiceConfiguration, log: ServiceLog, store: StoreLink, jetStream: JetStream,
        environment: [String: String]
    ) {
        self.configuration = configuration
        self.log = log
        self.store = store
        self.jetStream = jetStream
        var serverConfiguration = BusServer.Configuration(
            name: "fleetsvc", version: ContextBusVersion.string, socketPath: configuration.socketPath)
        serverConfiguration.onHandlerError = { method, error in log.error("\(method): \(error)") }
        server = BusServer(configuration: serverConfiguration)
        operations = ServiceOperations(name: "fleetsvc", options: configuration.operations, log: log)
        outbound = Outbound(
            configuration: configuration, store: store, jetStream: jetStream, counters: counters, log: log,
            environment: environment)
        inbound = Inbound(
            configuration: configuration, store: store, jetStream: jetStream, counters: counters, log: log,
            environment: environment)
    }

    static func start(
        configuration: FleetServiceConfiguration, log: ServiceLog, environment: [String: String]
    )
        async throws -> FleetService
    {
        let store = await StoreLink.connect(path: configuration.storeSocketPath, log: log)
        let stateJSON = try await store.client.call(
            method: "store.replica", params: JSONValue.object(["gateway": .string(configuration.gateway)]))
        let state = try ReplicaStateResult(json: stateJSON).state
        let jetStream = try JetStream(
            settings: .init(
                url: configuration.natsURL, name: "fleetsvc \(configuration.gateway)",
                credentialsFile: configuration.credentialsFile,
                certificateAuthorityFile: configuration.certificateAuthorityFile))
        let service = FleetService(
            configuration: configuration, log: log, store: store, jetStream: jetStream, environment: environment)
        service.counters.update {
            $0.published = state.published
            $0.lastTxn = state.lastTxn
            $0.applied = state.applied.mapValues(\.txn)
        }
        service.registerHandlers()
        try service.server.start()
        service.watchStore()
        service.startBridge(state: state)
        service.operations.ready(
            service.server,
            status: "gateway \(configuration.gateway) of fleet \(configuration.fleet); NATS \(configuration.natsURL)")
        log.info(
            "gateway \(configuration.gateway) of fleet \(configuration.fleet): listening on \(configuration.socketPath); "
                + "NATS \(configuration.natsURL); published up to txn \(state.published)")
        return service
    }

    /// Creates the stream (retrying while NATS is away), then starts the bridge's threads.
    private func startBridge(state: ReplicaState) {
        let thread = Thread { [self] in
            var attempt = 0
            while !isStopping.isSet {
                do {
                    try jetStream.ensureStream(
                        name: configuration.streamName, subjects: [configuration.allTransactionsSubject],
                        replicas: configuration.replicas, duplicateWindow: .seconds(120))
                    break
                } catch {
                    attempt += 1
                    if attempt == 1 { log.warning("waiting for JetStream at \(configuration.natsURL): \(error)") }
                    counters.update { $0.state = "connecting" }
                    CurrentThread.sleep(nanoseconds: Int64(250) * 1_000_000)
                }
            }
            if !isStopping.isSet {
                outbound.start(from: state.published)
                inbound.start(state: state)
            }
            starter.signal()
        }
        thread.name = "fleetsvc.start"
        thread.start()
    }

    /// Rings the outbound's doorbell on every commit (`store.changed`), resubscribing after a reconnect.
    private func watchStore() {
        let outbound = self.outbound
        let client = store.client
        let log = self.log
        let counters = self.counters
        let noteLastTxn: @Sendable (JSONValue?) -> Void = { txn in
            guard let txn = txn?.intValue else { return }
            counters.update { $0.lastTxn = max($0.lastTxn, txn) }
        }
        let subscribe: @Sendable () -> Void = {
            Task {
                do {
                    let answer = try await client.call(
                        method: "store.subscribe", params: .object(["toMany": .string("changes")]))
                    noteLastTxn(answer.objectValue?["txn"])
                } catch {
                    log.debug("subscribing to the store's changes: \(error)")
                }
                outbound.ring()
            }
        }
        let events = client.events(method: "store.changed").startWithValues { event in
            noteLastTxn(event.params.objectValue?["txn"])
            outbound.ring()
        }
        let reconnects = client.onReconnect { _ in subscribe() }
        observations.withLock { $0 += [events, reconnects] }
        subscribe()
    }

    private func registerHandlers() {
        let counters = self.counters
        let configuration = self.configuration
        let jetStream = self.jetStream
        operations.serve(server) { FleetMetrics.families(counters.current, isConnected: jetStream.isConnected) }
        let client = store.client
        server.register(FleetStatus.self) { _, _ in
            // The store's last txn as of now, so that a save answered before this request counts in `pending` (the
            // `store.changed` events that also tell it may still be on their way); the last one heard of when
            // storesvc is away.
            if let state = try? await client.call(method: "store.replica", params: .object([:])),
                let lastTxn = state.objectValue?["lastTxn"]?.intValue
            {
                counters.update { $0.lastTxn = max($0.lastTxn, lastTxn) }
            }
            let values = counters.current
            return FleetStatusResult(
                gateway: configuration.gateway, fleet: configuration.fleet, state: values.state,
                isConnected: jetStream.isConnected, published: values.published, applied: values.applied,
                pending: values.pending, refused: values.refused,
                counters: [
                    "unknown": values.unknown, "rejected": values.rejected, "publications": values.publications,
                    "gaps": values.gaps, "commandsRun": values.commandsRun, "commandsRefused": values.commandsRefused,
                ])
        }
    }

    func stop() async {
        guard isStopping.setOnce() else { return }
        operations.stopping(status: "stopping: the store keeps the fleet positions")
        starter.wait()
        outbound.stop()
        inbound.stop()
        await server.shutdown(gracefully: true, timeout: .seconds(2))
        for observation in observations.withLock({ $0 }) { observation.dispose() }
        jetStream.close()
        store.client.close()
    }
}
