import ContextBusDBus
import ContextBusServer
import ContextBusWire

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
    /// Chain scheduling and limits: adapter, concurrency, serialisation, retries, timeouts (the resolve timeout too).
    var chains = ChainSettings()
    /// How much goes to standard error (`--log-level`).
    var logLevel: LogLevel = .info
    /// The socket's mode, who may connect, the frame, in-flight and outbound limits (`--socket-mode`,
    /// `--allow-uid`, `--allow-gid`, `--max-frame`, `--max-in-flight`, `--max-outbound`).
    var access = ServerAccessOptions()
    /// Log format, metrics file, test hooks (`OperationsOptions`).
    var operations = OperationsOptions()
    /// Watches that live as long as the service, recorded into the store (`--watch ADDRESS=UUID[,UUID…]`).
    var watches: [ServiceWatch] = []
    /// The formats values are decoded with: the standard ones and `--decode UUID=FORMAT…`.
    var decoders = CharacteristicDecoders.standard

    /// A `--watch`: a device and the characteristics whose notifications are recorded.
    struct ServiceWatch: Sendable, Hashable {
        var address: BluetoothAddress
        var characteristics: [BluetoothUUID]
    }

    /// What the command line asks for.
    enum Outcome: Sendable, Equatable {
        case run(DeviceServiceConfiguration)
        case help
    }

    /// The runtime directory: `$CTXBUS_RUNTIME_DIR`, else `$XDG_RUNTIME_DIR/ctxbus`, else `./run`
    /// (docs/protocol.md, "Transport and framing").
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
