/// Where a service's socket is, and why there: `--socket`, the service's environment variable, or
/// the default the services themselves use (`$CTXBUS_RUNTIME_DIR/<name>.sock`;
/// `CTXBUS_RUNTIME_DIR` defaults to `$XDG_RUNTIME_DIR/ctxbus`, else `./run`, as in storesvc's and
/// devicesvc's configuration).
struct ServiceEndpoint: Sendable, Hashable {
    /// Where the path came from.
    enum Source: Sendable, Hashable {
        case flag
        case variable(String)
        case defaultPath
    }

    var service: ServiceKind
    var path: String
    var source: Source

    /// Picks the socket for `service`: `flag` (the `--socket` value), else `$CTXBUS_STORE_SOCKET` /
    /// `$CTXBUS_DEVICE_SOCKET`, else the services' default.
    static func resolve(_ service: ServiceKind, flag: String?, environment: [String: String]) -> ServiceEndpoint {
        if let flag { return ServiceEndpoint(service: service, path: flag, source: .flag) }
        if let path = environment[service.socketVariable], !path.isEmpty {
            return ServiceEndpoint(service: service, path: path, source: .variable(service.socketVariable))
        }
        return ServiceEndpoint(
            service: service, path: runtimeDirectory(environment: environment) + "/" + service.socketFileName,
            source: .defaultPath)
    }

    /// `$CTXBUS_RUNTIME_DIR`, else `$XDG_RUNTIME_DIR/ctxbus`, else `./run` (docs/protocol.md, "Transport").
    static func runtimeDirectory(environment: [String: String]) -> String {
        if let dir = environment["CTXBUS_RUNTIME_DIR"], !dir.isEmpty { return dir }
        if let xdg = environment["XDG_RUNTIME_DIR"], !xdg.isEmpty { return xdg + "/ctxbus" }
        return "./run"
    }

    /// Where the path came from, for messages: `from --socket`, `from $CTXBUS_STORE_SOCKET`, `the default`.
    var sourceDescription: String {
        switch source {
        case .flag: return "given with --socket"
        case .variable(let name): return "from $\(name)"
        case .defaultPath: return "the default, $CTXBUS_RUNTIME_DIR/\(service.socketFileName)"
        }
    }

    /// The command that starts the service on this socket.
    var startCommand: String {
        switch service {
        case .store: return "storesvc --socket \(path)"
        case .device: return "devicesvc --socket \(path)"
        case .fleet: return "fleetsvc --gateway NAME --socket \(path)"
        }
    }
}
