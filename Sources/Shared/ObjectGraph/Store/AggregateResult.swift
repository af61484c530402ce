/// The answer to an `AggregateRequest`: one group per distinct key, ordered by the `groupBy` keys in the order given,
/// then the bucket, each ascending (IDs by their number, strings by their UTF-8 bytes, `null` first).
public struct AggregateResult: Sendable, Hashable {
    /// One group: its key values (to-one relationships as references, a bucket as its window's start date) and the
    /// requested values.
    public struct Group: Sendable, Hashable {
        public var key: [String: PropertyValue]
        public var values: [String: PropertyValue]

        public init(key: [String: PropertyValue], values: [String: PropertyValue]) {
            self.key = key
            self.values = values
        }
    }

    /// The last transaction the answer reflects.
    public var txn: Int64
    public var groups: [Group]

    public init(txn: Int64, groups: [Group]) {
        self.txn = txn
        self.groups = groups
    }
}
