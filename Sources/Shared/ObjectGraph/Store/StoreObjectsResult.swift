/// The answer to `objects(with:)`.
public struct StoreObjectsResult: Sendable, Hashable {
    public var txn: Int64
    public var objects: [ObjectSnapshot]
    public var missing: [ObjectID]

    public init(txn: Int64, objects: [ObjectSnapshot], missing: [ObjectID]) {
        self.txn = txn
        self.objects = objects
        self.missing = missing
    }
}
