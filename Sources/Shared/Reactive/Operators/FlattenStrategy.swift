/// How `flatMap` combines the inner signals it creates.
public enum FlattenStrategy: Sendable, Hashable {
    /// One inner signal at a time, in order: the next starts when the previous completes (RAC's `concat`,
    /// what `flattenMap` chains use). A failing inner signal fails the whole, and later ones never start.
    case concat
    /// Every inner signal runs as soon as it arrives; values interleave as they come.
    case merge
    /// Only the latest inner signal runs: a new one interrupts the previous (RAC's `switchToLatest`).
    case latest
}
