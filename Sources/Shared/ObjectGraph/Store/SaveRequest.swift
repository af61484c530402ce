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

        /// A new object of `entity` named `ref` (its temporary ID's reference), as a client names an insert on
        /// the wire; relationships in the same save point at it with `ObjectID(entity:temporaryReference:)`.
        public init(entity: String, ref: String, values: [String: PropertyValue]) {
            self.init(id: ObjectID(entity: entity, temporaryReference: ref), values: values)
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
    /// Whether a store over the bus answers with the committed change set (`store.save`'s `"changes": true`,
    /// docs/protocol.md). A store in this process always answers with it.
    public var includesChangesInAnswer: Bool
    /// For a save that applies another gateway's transaction (the fleet bridge): where it comes from. Only a
    /// `ReplicatedStore` takes it (`SaveOrigin`, docs/fleet.md).
    public var origin: SaveOrigin?

    public init(
        inserts: [Insert] = [], updates: [Update] = [], deletes: [Delete] = [], mergePolicy: MergePolicy = .error,
        durability: Durability = .disk, author: String? = nil, includesChangesInAnswer: Bool = false
    ) {
        self.inserts = inserts
        self.updates = updates
        self.deletes = deletes
        self.mergePolicy = mergePolicy
        self.durability = durability
        self.author = author
        self.includesChangesInAnswer = includesChangesInAnswer
    }

    /// A batch to run as this save: the planner turns it into updates or deletes of the objects it matches, in the
    /// writer's transaction (`PersistentStore.batch(_:)`).
    package var batch: BatchRequest?

    /// The save that runs `batch`.
    package init(batch: BatchRequest) {
        self.init(durability: batch.durability, author: batch.author)
        self.batch = batch
    }

    /// Whether the request changes nothing.
    public var isEmpty: Bool { inserts.isEmpty && updates.isEmpty && deletes.isEmpty && batch == nil }
}
