/// The services a top-level command (`ping`, `metrics`) talks to: the one its `[store|device]` argument names, or
/// both; `--socket` only with one named.
enum ServiceTargets {
    /// The positional argument of `ping` and `metrics`.
    static let argument = ArgumentSpec(
        "service", help: "store or device; without it, both.", isOptional: true)

    /// `--socket` of `ping` and `metrics`.
    static let socketOption = OptionSpec.value(
        "socket", valueName: "path",
        help: "The service's socket, with a service named (default: $CTXBUS_STORE_SOCKET or "
            + "$CTXBUS_DEVICE_SOCKET, else $CTXBUS_RUNTIME_DIR/store.sock or device.sock).")

    /// The services the arguments name.
    static func services(_ arguments: ParsedArguments) throws(UsageError) -> [ServiceKind] {
        guard let word = arguments.firstPositional("service") else {
            if arguments.value("socket") != nil { throw UsageError("--socket needs a service: store or device") }
            return ServiceKind.allCases
        }
        guard let service = ServiceKind(rawValue: word) else {
            throw UsageError("unknown service '\(word)': expected store or device")
        }
        return [service]
    }

    /// Where each of `services` is, from `--socket` and the environment.
    static func endpoints(
        _ services: [ServiceKind], socket: String?, environment: [String: String]
    ) -> [ServiceEndpoint] {
        services.map { ServiceEndpoint.resolve($0, flag: socket, environment: environment) }
    }
}
