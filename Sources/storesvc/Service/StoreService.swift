import ContextBusObjectGraph
import ContextBusSQLite
import ContextBusServer
import ContextBusSupport
import ContextBusWire
import Foundation

/// The running store service: the instance lock, the SQLite store (the root context's storage),
/// the subscription hub, the request handlers, and the bus server that serves them.
///
/// ```
///  clients ──socket──▶ BusServer ──handler queue──▶ StoreRequestHandlers ──▶ SQLiteStore (writer: group commit)
///                                                         │                        │ committed ChangeSets
///                                                         ▼                        ▼
///                                                  SubscriptionHub ◀──observer queue
///                                                         │ store.changed (bounded per connection)
///                                                         ▼
///                                                  BusConnection.send
/// ```
///
/// `start()` serves; `stop()` stops accepting, lets every request in flight answer (every queued
/// save is committed or failed and answered), closes the connections, then closes the store.
final class StoreService: Sendable {
    let configuration: StoreServiceConfiguration
    let store: SQLiteStore
    let hub: SubscriptionHub
    /// The live queries of `store.watch`.
    let watches: WatchHub
    let handlers: StoreRequestHandlers
    let server: BusServer
    let log: ServiceLog
    /// Runs the `--retain` rules.
    let retention: RetentionSweeper
    /// Readiness, the watchdog, the metrics and the backups' counters (StoreService+Operations.swift).
    let operations: ServiceOperations
    let backups = BackupRunner()
    private let lock: InstanceLock

    /// Takes the database's lock, loads the model, opens the store and prepares the server.
    ///
    /// - Throws: `StoreServiceError` saying what could not be opened.
    init(configuration: StoreServiceConfiguration, log: ServiceLog) throws(StoreServiceError) {
        self.configuration = configuration
        self.log = log
        let databaseURL = URL(fileURLWithPath: configuration.databasePath)
        do {
            try FileManager.default.createDirectory(
                at: databaseURL.deletingLastPathComponent(), withIntermediateDirectories: true)
        } catch {
            throw .database(path: configuration.databasePath, reason: "cannot create its directory: \(error)")
        }
        do {
            lock = try InstanceLock(databasePath: configuration.databasePath)
        } catch {
            throw .alreadyRunning(error)
        }
        let model = try configuration.loadModel()
        if let directory = configuration.testOptions.powerCutDirectory {
            do {
                try PowerCutVFS.install(
                    PowerCutDisk(
                        directory: directory, databasePath: databaseURL.path,
                        freezePoint: configuration.testOptions.freezePoint))
            } catch {
                throw .database(path: configuration.databasePath, reason: "\(error)")
            }
            log.warning("--test-power-cut: the store's files are on a simulated disk (\(directory)); for tests only")
        }
        do {
            var storeConfiguration = SQLiteStore.Configuration(
                historyRetention: configuration.historyRetention, pageSize: configuration.pageSize)
            if let pages = configuration.testOptions.checkpointPages {
                storeConfiguration.checkpointThresholdPages = pages
            }
            if let point = configuration.testOptions.killDuringMigration {
                log.warning(
                    "--test-kill-during-migration \(point): the process kills itself during a migration; for tests only"
                )
                storeConfiguration.migrationProgress = MigrationKillSwitch(point: point).passed
                storeConfiguration.migrationBackupPagesPerStep = 8
            }
            store = try SQLiteStore(url: databaseURL, model: model, configuration: storeConfiguration)
        } catch let error as StoreError {
            switch error {
            case .migrationRefused, .modelMismatch: throw .migrationRefused(path: configuration.databasePath, error)
            default: throw .database(path: configuration.databasePath, reason: "\(error)")
            }
        } catch {
            throw .database(path: configuration.databasePath, reason: "\(error)")
        }
        if let migration = store.migration {
            log.info(
                "migrated \(configuration.databasePath) in place: \(migration.summary); the file as it was is "
                    + "\(store.migrationBackupPath ?? "not backed up")")
            for line in migration.lines { log.info("  \(line)") }
        }
        for rule in configuration.retentionRules {
            if let problem = rule.problem(in: model) {
                store.close()
                throw .retention(problem)
            }
        }
        retention = RetentionSweeper(
            rules: configuration.retentionRules, interval: configuration.retentionInterval, store: store, log: log)
        hub = SubscriptionHub(store: store, log: log)
        watches = WatchHub(store: store, log: log)
        handlers = StoreRequestHandlers(
            store: store, hub: hub, log: log, retention: retention, previousModelVersions: store.previousModelVersions)
        var serverConfiguration = BusServer.Configuration(
            name: "storesvc", version: ContextBusVersion.string, socketPath: configuration.socketPath)
        serverConfiguration.model = model
        // A request made for another model (`"model"` in its params: a client that read the model before a
        // migration) is refused before its params are read with this one.
        let precondition = ModelVersionPrecondition(model: model, previousVersions: store.previousModelVersions)
        serverConfiguration.requestPrecondition = { method, params in
            precondition.refusal(method: method, params: params)
        }
        serverConfiguration.socketMode = configuration.socketMode
        serverConfiguration.maxFrame = configuration.maxFrame
        serverConfiguration.maxInFlight = configuration.maxInFlight
        serverConfiguration.maxOutbound = configuration.maxOutbound
        serverConfiguration.access = BusServer.AccessPolicy(
            allowedUserIDs: Set(configuration.allowedUIDs), allowedGroupIDs: Set(configuration.allowedGIDs))
        serverConfiguration.onHandlerError = { method, error in log.error("\(method): \(error)") }
        server = BusServer(configuration: serverConfiguration)
        operations = ServiceOperations(name: "storesvc", options: configuration.operations, log: log)
        registerHandlers()
        registerOperationsHandlers()
    }

    /// Binds the socket and starts serving.
    ///
    /// - Throws: `StoreServiceError.socket` (a live service answers on the socket, the path is taken…).
    func start() throws(StoreServiceError) {
        do {
            try server.start()
        } catch {
            throw .socket(path: configuration.socketPath, reason: "\(error)")
        }
        log.info(
            "serving \(configuration.databasePath) (model \(store.model.versionHash), txn \(store.lastTransaction), pages of \(store.pageSize) bytes) on \(configuration.socketPath)"
        )
        retention.start()
        if let pageSize = configuration.pageSize, pageSize != store.pageSize {
            log.warning(
                "--page-size \(pageSize) applies to a new database only: \(configuration.databasePath) keeps its \(store.pageSize)-byte pages"
            )
        }
        operations.ready(server, status: "serving \(configuration.databasePath) at txn \(store.lastTransaction)")
    }

    /// Stops accepting, answers every request in flight (saves included), closes every connection,
    /// then closes the store. Call once, off the event loops.
    func stop() async {
        log.info("stopping")
        retention.stop()
        operations.stopping(status: "stopping: answering the saves in flight")
        backups.stop()
        await server.shutdown(gracefully: true, timeout: .seconds(30))
        handlers.waitForSaves()
        hub.stop()
        watches.stop()
        store.close()
        log.info("stopped at txn \(store.lastTransaction)")
    }
}

/// Why `storesvc` could not start; the process exits with `exitStatus` after printing it.
enum StoreServiceError: Error, Sendable, CustomStringConvertible {
    case alreadyRunning(InstanceLockError)
    /// The model file cannot be read or is not a valid model (exit status 78).
    case model(path: String, reason: String)
    /// The database was made with a model the new one cannot be migrated from in place (exit status 78): the
    /// `StoreError.migrationRefused` names each difference (`modelMismatch`: the stored model cannot be read).
    case migrationRefused(path: String, StoreError)
    case database(path: String, reason: String)
    case socket(path: String, reason: String)
    /// A `--retain` rule the model cannot serve (exit status 64, as a bad command line).
    case retention(String)

    var description: String {
        switch self {
        case .alreadyRunning(let error): return "\(error); refusing to start"
        case .model(let path, let reason): return "cannot load the model \(path): \(reason)"
        case .migrationRefused(let path, let error):
            return "cannot open the database \(path): \(error)\n"
                + "  (storesvc --check-migration shows the whole plan; docs/operations.md, \"Changing the model\")"
        case .database(let path, let reason): return "cannot open the database \(path): \(reason)"
        case .socket(let path, let reason): return "cannot listen on \(path): \(reason)"
        case .retention(let problem): return problem
        }
    }

    /// `EX_CONFIG` (sysexits.h) for a model the service cannot serve, 64 for a retention rule, else 1.
    var exitStatus: Int32 {
        switch self {
        case .model, .migrationRefused: return StoreServiceError.configurationExitStatus
        case .retention: return ConfigurationError.exitStatus
        default: return 1
        }
    }

    /// `EX_CONFIG` from sysexits.h: the configuration (here the model) cannot be used.
    static let configurationExitStatus: Int32 = 78
}
