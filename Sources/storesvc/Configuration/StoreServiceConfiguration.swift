import ContextBusServer

/// Everything `storesvc` is told on its command line, with the defaults filled in.
///
/// Parsed by `StoreServiceConfiguration.parse(arguments:environment:identity:)`; see `--help`
/// (`StoreServiceCommand.usage`) for what each flag means.
struct StoreServiceConfiguration: Sendable, Equatable {
    /// The Unix socket to listen on.
    var socketPath: String
    /// The SQLite database file.
    var databasePath: String
    /// A JSON model file; `nil` serves `Model.deviceReadings`.
    var modelPath: String?
    /// The largest frame accepted, in bytes.
    var maxFrame: Int = 16 * 1024 * 1024
    /// Requests one connection may have in flight before it gets `429`.
    var maxInFlight: Int = 1024
    /// The bound of each connection's outbound queue, in bytes.
    var maxOutbound: Int = 8 * 1024 * 1024
    /// The mode of the socket file.
    var socketMode: UInt32 = 0o660
    /// Peers with one of these uids may connect (the service's own uid and root always may).
    var allowedUIDs: [UInt32]
    /// Peers with one of these primary gids may connect.
    var allowedGIDs: [UInt32] = []
    /// How many of the latest transactions the history keeps.
    var historyRetention: Int = 100_000
    /// The page size of a database file the service creates; `nil` for SQLite's default (4,096).
    var pageSize: Int?
    /// How much goes to standard error.
    var logLevel: LogLevel = .info
    /// `--retain` rules, in the order given.
    var retentionRules: [RetentionRule] = []
    /// `--retain-interval`: how often the rules run after the first time at start.
    var retentionInterval: Duration = .seconds(60)
    /// Log format, metrics file, test hooks (`OperationsOptions`).
    var operations = OperationsOptions()
    /// `--check-migration`: print what opening the database with the model would migrate (or refuse), and exit
    /// without touching the file.
    var checksMigration = false
    /// The hidden flags of the power-cut and migration tests.
    var testOptions = StoreServiceTestOptions()

    /// What the command line asks for.
    enum Outcome: Sendable, Equatable {
        case run(StoreServiceConfiguration)
        case help
    }

    /// The process's own identity, which the defaults depend on.
    struct Identity: Sendable, Equatable {
        var uid: UInt32
        var gid: UInt32
        // `current` is in Platform.swift.
    }

    /// The runtime directory: `$CTXBUS_RUNTIME_DIR`, else `$XDG_RUNTIME_DIR/ctxbus`, else `./run`
    /// (`docs/protocol.md`, "Transport and framing").
    static func runtimeDirectory(environment: [String: String]) -> String {
        if let dir = environment["CTXBUS_RUNTIME_DIR"], !dir.isEmpty { return dir }
        if let xdg = environment["XDG_RUNTIME_DIR"], !xdg.isEmpty { return xdg + "/ctxbus" }
        return "./run"
    }

    /// The data directory, where the database lives by default: `$CTXBUS_DATA_DIR`, else
    /// `$XDG_DATA_HOME/ctxbus`, else `$HOME/.local/share/ctxbus`, else `./data`.
    ///
    /// Not the runtime directory: that is usually a tmpfs emptied at logout or reboot.
    static func dataDirectory(environment: [String: String]) -> String {
        if let dir = environment["CTXBUS_DATA_DIR"], !dir.isEmpty { return dir }
        if let xdg = environment["XDG_DATA_HOME"], !xdg.isEmpty { return xdg + "/ctxbus" }
        if let home = environment["HOME"], !home.isEmpty { return home + "/.local/share/ctxbus" }
        return "./data"
    }

    /// The configuration with every default and no flags.
    static func defaults(environment: [String: String], identity: Identity) -> StoreServiceConfiguration {
        StoreServiceConfiguration(
            socketPath: runtimeDirectory(environment: environment) + "/store.sock",
            databasePath: dataDirectory(environment: environment) + "/store.sqlite",
            allowedUIDs: identity.uid == 0 ? [0] : [identity.uid, 0])
    }

    /// Whether a peer with these credentials may use the service.
    func allows(uid: UInt32, gid: UInt32) -> Bool {
        allowedUIDs.contains(uid) || allowedGIDs.contains(gid)
    }
}
