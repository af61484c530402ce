/// Everything `devicesvc` is told on its command line, with the defaults filled in.
///
/// Parsed by `DeviceServiceConfiguration.parse(arguments:environment:)`; `--help`
/// (`DeviceServiceCommand.usage`) says what each flag means.
struct DeviceServiceConfiguration: Sendable, Equatable {
    /// The Unix socket to listen on (`--socket`).
    var socketPath: String
    /// The store service's socket, for `record: true` (`--store`).
    var storeSocketPath: String
    /// The D-Bus address of the system bus (`--bus`): `DBUS_SYSTEM_BUS_ADDRESS`, else the standard socket.
    var busAddress: String
    /// Chain scheduling and limits: adapter, concurrency, serialisation, retries, timeouts.
    var chains = ChainSettings()
    /// How long a connection may take to resolve its services before it is retried (`--resolve-timeout-ms`).
    var resolveTimeout: Duration = .seconds(5)
    /// How much goes to standard error (`--log-level`).
    var logLevel: LogLevel = .info

    /// What the command line asks for.
    enum Outcome: Sendable, Equatable {
        case run(DeviceServiceConfiguration)
        case help
    }

    /// The runtime directory: `$CTXBUS_RUNTIME_DIR`, else `$XDG_RUNTIME_DIR/ctxbus`, else `./run`
    /// (PROTOCOL.md, "Transport and framing").
    static func runtimeDirectory(environment: [String: String]) -> String {
        if let dir = environment["CTXBUS_RUNTIME_DIR"], !dir.isEmpty { return dir }
        if let xdg = environment["XDG_RUNTIME_DIR"], !xdg.isEmpty { return xdg + "/ctxbus" }
        return "./run"
    }

    /// The configuration with every default and no flags.
    static func defaults(environment: [String: String]) -> DeviceServiceConfiguration {
        let runtime = runtimeDirectory(environment: environment)
        return DeviceServiceConfiguration(
            socketPath: runtime + "/device.sock", storeSocketPath: runtime + "/store.sock",
            busAddress: DBusAddress.systemBus(environment: environment))
    }
}

/// How much `devicesvc` writes to standard error.
enum LogLevel: String, Sendable, Equatable, CaseIterable, Comparable {
    case error, warning, info, debug

    private var rank: Int {
        switch self {
        case .error: return 0
        case .warning: return 1
        case .info: return 2
        case .debug: return 3
        }
    }

    static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rank < rhs.rank }
}

/// A command line `devicesvc` cannot run with; the process exits with status 64 (`EX_USAGE`).
enum ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    case unknownFlag(String)
    case missingValue(flag: String)
    case invalidValue(flag: String, value: String, expected: String)
    case unexpectedArgument(String)

    var description: String {
        switch self {
        case .unknownFlag(let flag): return "unknown option '\(flag)' (see --help)"
        case .missingValue(let flag): return "\(flag) needs a value"
        case .invalidValue(let flag, let value, let expected): return "\(flag) '\(value)': expected \(expected)"
        case .unexpectedArgument(let argument): return "unexpected argument '\(argument)' (see --help)"
        }
    }

    /// `EX_USAGE` from sysexits.h.
    static let exitStatus: Int32 = 64
}
