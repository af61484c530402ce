/// The services `ctxbus` talks to, with what it needs to find them and to say how to start them.
enum ServiceKind: String, Sendable, Hashable, CaseIterable {
    case store, device, fleet

    /// `storesvc`, `devicesvc`.
    var executable: String {
        switch self {
        case .store: return "storesvc"
        case .device: return "devicesvc"
        case .fleet: return "fleetsvc"
        }
    }

    /// The environment variable that overrides the default socket path.
    var socketVariable: String {
        switch self {
        case .store: return "CTXBUS_STORE_SOCKET"
        case .device: return "CTXBUS_DEVICE_SOCKET"
        case .fleet: return "CTXBUS_FLEET_SOCKET"
        }
    }

    /// The socket's name in the runtime directory, as the services default to it.
    var socketFileName: String {
        switch self {
        case .store: return "store.sock"
        case .device: return "device.sock"
        case .fleet: return "fleet.sock"
        }
    }
}
