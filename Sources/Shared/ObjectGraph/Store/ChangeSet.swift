public import Foundation

/// What one committed transaction changed: `NSManagedObjectContextDidSaveNotification`'s payload.
public struct ChangeSet: Sendable, Hashable {
    /// An object the transaction changed: its values after the commit, the keys that changed,
    /// and those keys' values before.
    public struct Update: Sendable, Hashable {
        public var snapshot: ObjectSnapshot
        public var changedKeys: Set<String>
        public var previousValues: [String: PropertyValue]
        public init(snapshot: ObjectSnapshot, changedKeys: Set<String>, previousValues: [String: PropertyValue]) {
            self.snapshot = snapshot
            self.changedKeys = changedKeys
            self.previousValues = previousValues
        }
    }

    public var txn: Int64
    public var time: Date
    public var author: String?
    /// New objects, with all their values.
    public var inserted: [ObjectSnapshot]
    /// Changed objects, including the other side of changed relationships.
    public var updated: [Update]
    /// Deleted objects, with their last committed values (cascades included).
    public var deleted: [ObjectSnapshot]

    public init(
        txn: Int64, time: Date, author: String?, inserted: [ObjectSnapshot], updated: [Update],
        deleted: [ObjectSnapshot]
    ) {
        self.txn = txn
        self.time = time
        self.author = author
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
    }

    /// Whether the transaction changed nothing.
    public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }
}
