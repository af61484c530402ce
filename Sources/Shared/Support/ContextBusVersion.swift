/// The version of ContextBus.
public enum ContextBusVersion {
    /// The version string reported by the services in `bus.hello`.
    public static let string = "0.1.0"
}
