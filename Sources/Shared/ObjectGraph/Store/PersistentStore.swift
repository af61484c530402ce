import ContextBusSupport
public import Foundation

/// The committed state of an object graph: what a top-level context saves into and fetches from.
///
/// Implementations: `SQLiteStore` (durable, group commit), `InMemoryStore` (same semantics,
/// nothing on disk) and, in `BusProtocol`, `RemoteStore` (talks to `storesvc`). Every method may
/// be called from any thread, concurrently; `save` blocks until its transaction is committed
/// (durably, unless the request asks for `.memory`), and concurrent saves are grouped into one
/// transaction where the implementation can (group commit).
public protocol PersistentStore: AnyObject, Sendable {
    /// The model the store was opened with.
    var model: Model { get }

    /// The number of the last committed transaction (0 before the first).
    var lastTransaction: Int64 { get }

    /// Runs a fetch against committed data.
    ///
    /// - Throws: `StoreError.invalidRequest` for an unknown entity or key, an unbound variable,
    ///   or a predicate that does not fit the model.
    func fetch(_ request: FetchRequest) throws -> StoreFetchResult

    /// The current snapshots of `ids`; IDs with no object are listed in `missing`.
    func objects(with ids: [ObjectID]) throws -> StoreObjectsResult

    /// Validates, checks versions, applies the merge policy and commits `request` as one
    /// transaction: all of it or none of it.
    ///
    /// - Throws: `StoreError.conflict` (policy `error`), `.notFound` (an update of a missing
    ///   object), `.validation`, `.invalidRequest`, or a storage error.
    func save(_ request: SaveRequest) throws -> SaveResult

    /// Reserves `count` permanent IDs for new objects of `entity` (Core Data's
    /// `obtainPermanentIDs`); they may then be used as the IDs of inserts.
    func obtainPermanentIDs(entity: String, count: Int) throws -> [ObjectID]

    /// Committed transactions with `txn > since`, oldest first, at most `limit`.
    ///
    /// - Throws: `StoreError.historyUnavailable` when the history no longer reaches back to `since`.
    func history(since: Int64, limit: Int) throws -> [ChangeSet]

    /// Calls `observer` with every change set committed after this call, in `txn` order, on a
    /// thread of the store's choosing; never while a store lock is held.
    func observeChanges(_ observer: @escaping @Sendable (ChangeSet) -> Void) -> StoreObservation
}

/// A registration made by `observeChanges`; `cancel()` (or releasing it) stops delivery.
public final class StoreObservation: Sendable {
    private let onCancel: @Sendable () -> Void
    private let cancelled = AtomicFlag()

    public init(onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = onCancel
    }

    /// Stops delivery; safe to call more than once and from any thread.
    public func cancel() {
        if cancelled.setOnce() { onCancel() }
    }

    deinit { cancel() }
}

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

/// The committed values of one object at one version.
///
/// `values` holds every attribute and relationship (to-one as `.reference` or `.null`,
/// to-many as `.references`, sorted by ID).
public struct ObjectSnapshot: Sendable, Hashable {
    public var id: ObjectID
    public var version: Int64
    public var values: [String: PropertyValue]

    public init(id: ObjectID, version: Int64, values: [String: PropertyValue]) {
        self.id = id
        self.version = version
        self.values = values
    }
}

/// How a save is acknowledged.
public enum Durability: String, Sendable, Hashable, Codable, CaseIterable {
    /// Once the transaction is durable on disk (`synchronous=FULL`).
    case disk
    /// Once the root has accepted and applied it; it may be lost in a power failure.
    case memory
}

/// What to do when an update's or delete's version is not the current one (`PROTOCOL.md`).
public enum MergePolicy: String, Sendable, Hashable, Codable, CaseIterable {
    /// The whole save fails with a conflict error.
    case error
    /// The changed values are written over the current object; other keys keep the store's values.
    case objectTrump
    /// For each changed key whose current value differs from `original`, the store's value is kept.
    case storeTrump
    /// Like `objectTrump`, for clients that send every key.
    case overwrite
    /// The conflicting objects' changes are dropped; the rest commits.
    case rollback
}

/// A change set sent to a store: `store.save`'s params as a value.
public struct SaveRequest: Sendable, Hashable {
    /// A new object. `id` is temporary (its `ref` names it) or a permanent ID from `obtainPermanentIDs`.
    public struct Insert: Sendable, Hashable {
        public var id: ObjectID
        public var values: [String: PropertyValue]
        public init(id: ObjectID, values: [String: PropertyValue]) {
            self.id = id
            self.values = values
        }
    }

    /// Changed keys of an existing object. `version` `nil` skips the conflict check; `original`
    /// holds those keys' values at `version` (used by `storeTrump`).
    public struct Update: Sendable, Hashable {
        public var id: ObjectID
        public var version: Int64?
        public var values: [String: PropertyValue]
        public var original: [String: PropertyValue]
        public init(
            id: ObjectID, version: Int64?, values: [String: PropertyValue], original: [String: PropertyValue] = [:]
        ) {
            self.id = id
            self.version = version
            self.values = values
            self.original = original
        }
    }

    /// An object to delete; `version` `nil` skips the conflict check.
    public struct Delete: Sendable, Hashable {
        public var id: ObjectID
        public var version: Int64?
        public init(id: ObjectID, version: Int64?) {
            self.id = id
            self.version = version
        }
    }

    public var inserts: [Insert]
    public var updates: [Update]
    public var deletes: [Delete]
    public var mergePolicy: MergePolicy
    public var durability: Durability
    public var author: String?

    public init(
        inserts: [Insert] = [], updates: [Update] = [], deletes: [Delete] = [], mergePolicy: MergePolicy = .error,
        durability: Durability = .disk, author: String? = nil
    ) {
        self.inserts = inserts
        self.updates = updates
        self.deletes = deletes
        self.mergePolicy = mergePolicy
        self.durability = durability
        self.author = author
    }

    /// Whether the request changes nothing.
    public var isEmpty: Bool { inserts.isEmpty && updates.isEmpty && deletes.isEmpty }
}

/// The answer to a committed save.
public struct SaveResult: Sendable, Hashable {
    /// The transaction the save committed in (for an empty save, the last committed one).
    public var txn: Int64
    /// Each insert's ID (temporary or reserved) → its permanent ID.
    public var ids: [ObjectID: ObjectID]
    /// The new version of every object the transaction inserted or updated, including the other
    /// side of changed relationships.
    public var versions: [ObjectID: Int64]
    /// What the transaction committed, as subscribers see it.
    public var changes: ChangeSet

    public init(txn: Int64, ids: [ObjectID: ObjectID], versions: [ObjectID: Int64], changes: ChangeSet) {
        self.txn = txn
        self.ids = ids
        self.versions = versions
        self.changes = changes
    }
}

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
