/// The answer to a committed save.
public struct SaveResult: Sendable, Hashable {
    /// The transaction the save committed in (for an empty save, the last committed one).
    public var txn: Int64
    /// Each insert's ID (temporary or reserved) → its permanent ID.
    public var ids: [ObjectID: ObjectID]
    /// The new version of every object the transaction inserted or updated, including the other
    /// side of changed relationships.
    public var versions: [ObjectID: Int64]
    /// What the transaction committed, as subscribers see it. Every store gives it (`RemoteStore` asks `storesvc`
    /// for it with `SaveRequest.includesChangesInAnswer`); it is `nil` only in an answer read off the wire that was
    /// not asked to carry it. A context saving without it keeps the saved objects as faults.
    public var changes: ChangeSet?

    /// For a save that ran a batch: how many objects it matched.
    package var matched: Int?

    public init(txn: Int64, ids: [ObjectID: ObjectID], versions: [ObjectID: Int64], changes: ChangeSet?) {
        self.txn = txn
        self.ids = ids
        self.versions = versions
        self.changes = changes
    }
}

extension SaveResult {
    /// The permanent ID of the insert named `ref` (its temporary ID's reference).
    public func id(ref: String) -> ObjectID? {
        ids.first { $0.key.temporaryReference == ref }?.value
    }
}
