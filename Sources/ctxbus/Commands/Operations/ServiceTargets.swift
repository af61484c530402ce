import Foundation

/// The services a top-level command (`ping`, `metrics`) talks to: the one its `[store|device|fleet]` argument
/// names, or else storesvc, devicesvc and, when its socket exists (a gateway of a fleet), fleetsvc; `--socket` only
/// with one named.
enum ServiceTargets {
    /// The positional argument of `ping` and `metrics`.
    static let argument = ArgumentSpec(
        "service", help: "store, device or fleet; without it, store, device and fleet when its socket exists.",
        isOptional: true)

    /// `--socket` of `ping` and `metrics`.
    static let socketOption = OptionSpec.value(
        "socket", valueName: "path",
        help: "The service's socket, with a service named (default: $CTXBUS_STORE_SOCKET or "
            + "$CTXBUS_DEVICE_SOCKET or $CTXBUS_FLEET_SOCKET, else $CTXBUS_RUNTIME_DIR/store.sock, device.sock or "
            + "fleet.sock).")

    /// The service the arguments name, or `nil` for the default set.
    static func service(_ arguments: ParsedArguments) throws(UsageError) -> ServiceKind? {
        guard let word = arguments.firstPositional("service") else {
            if arguments.value("socket") != nil {
                throw UsageError("--socket needs a service: store, device or fleet")
            }
            return nil
        }
        guard let service = ServiceKind(rawValue: word) else {
            throw UsageError("unknown service '\(word)': expected store, device or fleet")
        }
        return service
    }

    /// Where the named service is (from `--socket` and the environment); with none named, storesvc and devicesvc,
    /// and fleetsvc when a socket file is where it would be (most gateways run no fleet bridge).
    static func endpoints(
        _ service: ServiceKind?, socket: String?, environment: [String: String]
    ) -> [ServiceEndpoint] {
        if let service { return [ServiceEndpoint.resolve(service, flag: socket, environment: environment)] }
        let fleet = ServiceEndpoint.resolve(.fleet, flag: nil, environment: environment)
        return [.store, .device].map { ServiceEndpoint.resolve($0, flag: nil, environment: environment) }
            + (FileManager.default.fileExists(atPath: fleet.path) ? [fleet] : [])
    }
}
