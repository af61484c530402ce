/// The answer to a committed `BatchRequest`.
public struct BatchResult: Sendable, Hashable {
    /// The transaction the batch committed in; `nil` when nothing matched and nothing was written.
    public var txn: Int64?
    /// How many objects matched (and were changed or deleted; cascades and inverse sides not counted).
    public var count: Int
    /// What the transaction committed, as subscribers see it; `nil` when nothing was written.
    public var changes: ChangeSet?

    public init(txn: Int64?, count: Int, changes: ChangeSet?) {
        self.txn = txn
        self.count = count
        self.changes = changes
    }
}

extension BatchResult {
    /// The answer of the save that ran a batch: its transaction only when it wrote something.
    package init(_ result: SaveResult) {
        let wrote = !(result.changes?.isEmpty ?? true)
        self.init(txn: wrote ? result.txn : nil, count: result.matched ?? 0, changes: wrote ? result.changes : nil)
    }
}
