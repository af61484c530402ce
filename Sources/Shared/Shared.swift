/// The shared library of ContextBus: the reactive core, the object graph and the persistence layer.
public enum ContextBusVersion {
    /// The version string reported by the services in `bus.hello`.
    public static let string = "0.1.0"
}
