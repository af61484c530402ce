/// The wire protocol of ContextBus: version 1 of `PROTOCOL.md`.
public enum BusProtocolVersion {
    /// The protocol number carried by `bus.hello`.
    public static let current = 1
}
