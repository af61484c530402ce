/// What a store counts of its own work: `PersistentStore.counters`, reported by `store.stats`.
public struct StoreCounters: Sendable, Hashable {
    /// Transactions committed (each one group of saves), when the store groups saves; `nil` otherwise.
    public var commits: Int64?
    /// Group size → how many commits had that size.
    public var groupSizes: [Int: Int64]
    /// Counters of the store's own, by name (`walFrames`, `walCheckpoints`, …).
    public var named: [String: Int64]

    public init(commits: Int64? = nil, groupSizes: [Int: Int64] = [:], named: [String: Int64] = [:]) {
        self.commits = commits
        self.groupSizes = groupSizes
        self.named = named
    }
}
