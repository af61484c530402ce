import ContextBusServer
import ContextBusWire

/// fleetsvc's settings, from its command line (`Usage.swift`, docs/fleet.md "Operations").
struct FleetServiceConfiguration: Sendable, Equatable {
    /// storesvc's socket.
    var storeSocketPath: String
    /// devicesvc's socket: with it, the gateway runs the commands sent to it.
    var deviceSocketPath: String?
    /// Where `fleet.status` is served.
    var socketPath: String
    var natsURL = "nats://127.0.0.1:4222"
    var gateway = ""
    var fleet = "default"
    var credentialsFile: String?
    var certificateAuthorityFile: String?
    /// The stream's replicas when fleetsvc creates it (1 for a single server, 3 for a cluster).
    var replicas = 1
    var logLevel: LogLevel = .info
    /// Log format, metrics file, test hooks (`OperationsOptions`).
    var operations = OperationsOptions()

    enum Outcome: Sendable, Equatable {
        case run(FleetServiceConfiguration)
        case help
    }

    /// The stream of the fleet's transactions: `CTXBUS_<FLEET>` (JetStream names take no '.').
    var streamName: String { "CTXBUS_" + fleet.uppercased().replacingOccurrences(of: "-", with: "_") }
    /// The stream of the fleet's commands (a work queue).
    var commandStreamName: String { streamName + "_COMMANDS" }
    /// The key-value bucket where each gateway remembers the commands it took, with their outcomes.
    var commandBucketName: String { streamName + "_COMMANDS_SEEN" }
    /// Every gateway's commands.
    var allCommandsSubject: String { "ctxbus.\(fleet).*.commands" }
    /// Where gateway `name` publishes its transactions.
    func transactionSubject(of name: String) -> String { "ctxbus.\(fleet).\(name).txn" }
    /// Every gateway's transactions.
    var allTransactionsSubject: String { "ctxbus.\(fleet).*.txn" }
    /// Where commands for gateway `name` are sent.
    func commandSubject(of name: String) -> String { "ctxbus.\(fleet).\(name).commands" }

    /// `natsURL` for logs and messages: a password in it (`nats://user:password@host`) shown as `***`.
    var natsURLWithoutPassword: String {
        natsURL.split(separator: ",", omittingEmptySubsequences: false).map { url -> String in
            guard let scheme = url.range(of: "://"), let at = url[scheme.upperBound...].lastIndex(of: "@"),
                let colon = url[scheme.upperBound..<at].firstIndex(of: ":")
            else { return String(url) }
            return String(url[..<url.index(after: colon)]) + "***" + String(url[at...])
        }.joined(separator: ",")
    }

    static func runtimeDirectory(environment: [String: String]) -> String {
        if let dir = environment["CTXBUS_RUNTIME_DIR"], !dir.isEmpty { return dir }
        if let xdg = environment["XDG_RUNTIME_DIR"], !xdg.isEmpty { return xdg + "/ctxbus" }
        return "./run"
    }

    /// Reads the command line (without the program name); flags take their value as the next argument or after
    /// `=`.
    ///
    /// - Throws: `ConfigurationError` naming the flag at fault (fleetsvc then exits 64).
    static func parse(arguments: [String], environment: [String: String]) throws(ConfigurationError) -> Outcome {
        let runtime = runtimeDirectory(environment: environment)
        var configuration = FleetServiceConfiguration(
            storeSocketPath: runtime + "/store.sock", socketPath: runtime + "/fleet.sock")
        if let url = environment["CTXBUS_NATS_URL"], !url.isEmpty { configuration.natsURL = url }
        var flags = FlagReader(arguments)
        while let flag = try flags.next() {
            switch flag {
            case "--help": return .help
            case "--store": configuration.storeSocketPath = try flags.nonEmpty()
            case "--device": configuration.deviceSocketPath = try flags.nonEmpty()
            case "--socket": configuration.socketPath = try flags.nonEmpty()
            case "--nats": configuration.natsURL = try flags.nonEmpty(expected: "a NATS URL such as nats://host:4222")
            case "--gateway": configuration.gateway = try name(&flags)
            case "--fleet": configuration.fleet = try name(&flags)
            case "--creds": configuration.credentialsFile = try flags.nonEmpty()
            case "--tls-ca": configuration.certificateAuthorityFile = try flags.nonEmpty()
            case "--replicas": configuration.replicas = try flags.integer(in: 1...5)
            case "--log-level": configuration.logLevel = try flags.choice()
            default:
                guard try configuration.operations.read(flag, from: &flags) else { throw .unknownFlag(flag) }
            }
        }
        guard !configuration.gateway.isEmpty else { throw .missingValue(flag: "--gateway") }
        return .run(configuration)
    }

    private static func name(_ flags: inout FlagReader) throws(ConfigurationError) -> String {
        let text = try flags.value()
        guard ReplicaParams.isValidGatewayName(text) else {
            throw flags.invalid(text, expected: "1 to 64 letters, digits, '-' or '_'")
        }
        return text
    }
}
