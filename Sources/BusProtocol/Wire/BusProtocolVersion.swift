/// The wire protocol of ContextBus: version 1 of `docs/protocol.md`.
public enum BusProtocolVersion {
    /// The protocol number carried by `bus.hello`.
    public static let current = 1
}
