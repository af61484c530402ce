/// How a save is acknowledged.
public enum Durability: String, Sendable, Hashable, Codable, CaseIterable {
    /// Once the transaction is durable on disk (`synchronous=FULL`).
    case disk
    /// Once the root has accepted and applied it; it may be lost in a power failure.
    case memory
}
