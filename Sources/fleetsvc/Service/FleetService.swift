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
/// `start` connects to storesvc (waiting for it), registers the store as the gateway, listens on its socket and
/// says it is ready; a thread of its own (`fleetsvc.start`) then connects to NATS (in the background while the
/// server is away: `fleet.status` says `connecting` meanwhile), creates the stream if it is missing and starts the
/// bridge's threads. `stop` stops them and the server.
final class FleetService: Sendable {
    let configuration: FleetServiceConfiguration
    let log: ServiceLog
    let store: StoreLink
    let counters = FleetCounters()
    let server: BusServer
    /// Readiness, the watchdog and the metrics (`FleetMetrics`).
    let operations: ServiceOperations
    private let environment: [String: String]
    /// The parts that talk to NATS, once the start thread has made them.
    private let bridge = Locked<Bridge?>(nil)
    private let observations = Locked<[any Disposable]>([])
    private let starter = DispatchSemaphore(value: 0)
    private let isStopping = AtomicFlag()

    /// Where `fleet.run` waits for its command's outcome: threads of the bridge's own, never the pool's.
    private let sending = DispatchQueue(label: "fleetsvc.send", attributes: .concurrent)

    private struct Bridge: Sendable {
        let jetStream: JetStream
        let outbound: Outbound
        let inbound: Inbound
        let sender: CommandSender
        /// With `--device`.
        let runner: CommandRunner?
    }

    private init(
        configuration: FleetServiceConfiguration, log: ServiceLog, store: StoreLink, environment: [String: String]
    ) {
        self.configuration = configuration
        self.log = log
        self.store = store
        self.environment = environment
        var serverConfiguration = BusServer.Configuration(
            name: "fleetsvc", version: ContextBusVersion.string, socketPath: configuration.socketPath)
        serverConfiguration.onHandlerError = { method, error in log.error("\(method): \(error)") }
        server = BusServer(configuration: serverConfiguration)
        operations = ServiceOperations(name: "fleetsvc", options: configuration.operations, log: log)
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
        let service = FleetService(configuration: configuration, log: log, store: store, environment: environment)
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
            status:
                "gateway \(configuration.gateway) of fleet \(configuration.fleet); NATS \(configuration.natsURLWithoutPassword)"
        )
        log.info(
            "gateway \(configuration.gateway) of fleet \(configuration.fleet): listening on \(configuration.socketPath); "
                + "NATS \(configuration.natsURLWithoutPassword); published up to txn \(state.published)")
        return service
    }

    /// On a thread of its own (every libnats call blocks): connects to NATS, creates the stream (waiting while NATS
    /// is away), then starts the bridge's threads. Settings libnats refuses stop the process (exit status 1).
    private func startBridge(state: ReplicaState) {
        let thread = Thread { [self] in
            defer { starter.signal() }
            let jetStream: JetStream
            do {
                jetStream = try JetStream(
                    settings: .init(
                        url: configuration.natsURL, name: "fleetsvc \(configuration.gateway)",
                        credentialsFile: configuration.credentialsFile,
                        certificateAuthorityFile: configuration.certificateAuthorityFile))
            } catch {
                log.error("cannot connect to NATS at \(configuration.natsURLWithoutPassword): \(error)")
                exit(1)
            }
            guard ensureStream(on: jetStream) else {
                jetStream.close()
                return
            }
            let made = Bridge(
                jetStream: jetStream,
                outbound: Outbound(
                    configuration: configuration, store: store, jetStream: jetStream, counters: counters, log: log,
                    environment: environment),
                inbound: Inbound(
                    configuration: configuration, store: store, jetStream: jetStream, counters: counters, log: log,
                    environment: environment),
                sender: CommandSender(configuration: configuration, jetStream: jetStream, log: log),
                runner: configuration.deviceSocketPath.map {
                    CommandRunner(
                        configuration: configuration, jetStream: jetStream, device: DeviceLink(path: $0),
                        counters: counters, log: log)
                })
            bridge.withLock { $0 = made }
            made.outbound.start(from: state.published)
            made.inbound.start(state: state)
            made.runner?.start()
        }
        thread.name = "fleetsvc.start"
        thread.start()
    }

    /// Creates the fleet's streams if they are missing (its transactions; its commands, a work queue), retrying
    /// while NATS is away; `false` when the service stops first.
    private func ensureStream(on jetStream: JetStream) -> Bool {
        var attempt = 0
        while !isStopping.isSet {
            do {
                try jetStream.ensureStream(
                    .init(
                        name: configuration.streamName, subjects: [configuration.allTransactionsSubject],
                        replicas: configuration.replicas, duplicateWindow: .seconds(120)))
                try jetStream.ensureStream(
                    .init(
                        name: configuration.commandStreamName, subjects: [configuration.allCommandsSubject],
                        replicas: configuration.replicas, duplicateWindow: .seconds(120), isWorkQueue: true,
                        maxAge: CommandRunner.memory))
                return true
            } catch {
                attempt += 1
                if attempt == 1 {
                    log.warning("waiting for JetStream at \(configuration.natsURLWithoutPassword): \(error)")
                }
                CurrentThread.sleep(nanoseconds: Int64(250) * 1_000_000)
            }
        }
        return false
    }

    /// Rings the outbound's doorbell on every commit (`store.changed`), resubscribing after a reconnect.
    private func watchStore() {
        let bridge = self.bridge
        let ring: @Sendable () -> Void = { bridge.withLock { $0 }?.outbound.ring() }
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
                ring()
            }
        }
        let events = client.events(method: "store.changed").startWithValues { event in
            noteLastTxn(event.params.objectValue?["txn"])
            ring()
        }
        let reconnects = client.onReconnect { _ in subscribe() }
        observations.withLock { $0 += [events, reconnects] }
        subscribe()
    }

    private func registerHandlers() {
        let counters = self.counters
        let configuration = self.configuration
        let bridge = self.bridge
        let isConnected: @Sendable () -> Bool = { bridge.withLock { $0 }?.jetStream.isConnected ?? false }
        operations.serve(server) { FleetMetrics.families(counters.current, isConnected: isConnected()) }
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
                isConnected: isConnected(), published: values.published, applied: values.applied,
                pending: values.pending, refused: values.refused,
                counters: [
                    "unknown": values.unknown, "rejected": values.rejected, "publications": values.publications,
                    "gaps": values.gaps, "commandsRun": values.commandsRun, "commandsRefused": values.commandsRefused,
                    "commandsRepeated": values.commandsRepeated,
                ])
        }
        let sending = self.sending
        server.register(FleetRun.self) { _, params in
            guard let sender = bridge.withLock({ $0 })?.sender else {
                throw RPCError.unavailable("not connected to NATS at \(configuration.natsURLWithoutPassword) yet")
            }
            return try await withLockedThrowingContinuation { continuation in
                sending.async {
                    do {
                        continuation.resume(returning: try sender.send(params))
                    } catch {
                        continuation.resume(throwing: error)
                    }
                }
            }
        }
    }

    func stop() async {
        guard isStopping.setOnce() else { return }
        operations.stopping(status: "stopping: the store keeps the fleet positions")
        starter.wait()
        let running = bridge.withLock { $0 }
        running?.outbound.stop()
        running?.inbound.stop()
        running?.runner?.stop()
        await server.shutdown(gracefully: true, timeout: .seconds(2))
        for observation in observations.withLock({ $0 }) { observation.dispose() }
        running?.jetStream.close()
        store.client.close()
    }
}
