/// The answer to a store fetch.
public struct StoreFetchResult: Sendable, Hashable {
    public enum Content: Sendable, Hashable {
        case objects([ObjectSnapshot])
        case ids([ObjectID])
        case count(Int)
    }

    /// The last transaction the read reflects.
    public var txn: Int64
    public var content: Content

    public init(txn: Int64, content: Content) {
        self.txn = txn
        self.content = content
    }
}
