import ContextBusObjectGraph
import ContextBusSupport

// `store.subscribe`, `store.unsubscribe` and the `store.changed` event (`docs/protocol.md`, "Store methods").

/// `store.subscribe` → `{"subscription":7,"txn":1235}`, then `store.changed` events.
public enum StoreSubscribe: RPCMethod {
    public typealias Params = SubscribeParams
    public typealias Result = SubscribeResult
    public static let name = "store.subscribe"
}

/// `store.unsubscribe` `{"subscription":7}` → `{}`.
public enum StoreUnsubscribe: RPCMethod {
    public typealias Params = UnsubscribeParams
    public typealias Result = EmptyObject
    public static let name = "store.unsubscribe"
}

/// `{"entity"?:"Reading","where"?:"…","args"?:{},"since"?:1200,"toMany"?:"changes"}`.
///
/// `toMany` is an addition to the design contract, documented in `docs/protocol.md` and `docs/decisions/tomany-changes.md`.
public struct SubscribeParams: JSONConvertible, Hashable {
    /// How `updated` entries of `store.changed` events carry a changed to-many relationship.
    public enum ToMany: String, Sendable, Hashable, CaseIterable {
        /// The whole array of member IDs in `values`, as `docs/protocol.md` has it (the default).
        case values
        /// Only the members added and removed, in `toManyChanges`; the key is left out of `values`. The
        /// service then never reads a to-many set to build an `updated` entry.
        case changes
    }

    /// The entity watched; `nil` watches every entity.
    public var entity: String?
    /// The predicate text (`where` on the wire).
    public var predicate: String?
    /// Values for the predicate's `$variables` (`args` on the wire).
    public var arguments: [String: JSONValue]
    /// Replay every transaction after this one first.
    public var since: Int64?
    /// How changed to-many relationships of updated objects are sent (`toMany` on the wire).
    public var toMany: ToMany

    public init(
        entity: String? = nil, predicate: String? = nil, arguments: [String: JSONValue] = [:], since: Int64? = nil,
        toMany: ToMany = .values
    ) {
        self.entity = entity
        self.predicate = predicate
        self.arguments = arguments
        self.since = since
        self.toMany = toMany
    }

    public init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        entity = try fields.optionalString("entity")
        predicate = try fields.optionalString("where")
        arguments = try fields.optionalObject("args") ?? [:]
        since = try fields.optionalInt64("since")
        if let since, since < 0 { throw fields.error("since", "must be at least 0") }
        toMany = try fields.optionalEnum("toMany", cases: ToMany.allCases) ?? .values
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = [:]
        if let entity { members["entity"] = .string(entity) }
        if let predicate { members["where"] = .string(predicate) }
        if !arguments.isEmpty { members["args"] = .object(arguments) }
        if let since { members["since"] = .int(since) }
        if toMany != .values { members["toMany"] = .string(toMany.rawValue) }
        return .object(members)
    }
}

/// `{"subscription":7,"txn":1235}`: the subscription's number and the transaction it starts after.
public struct SubscribeResult: JSONConvertible, Hashable {
    public var subscription: Int64
    public var txn: Int64

    public init(subscription: Int64, txn: Int64) {
        self.subscription = subscription
        self.txn = txn
    }

    public init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        subscription = try fields.int64("subscription")
        txn = try fields.int64("txn")
    }

    public var json: JSONValue { .object(["subscription": .int(subscription), "txn": .int(txn)]) }
}

/// `{"subscription":7}`: used by `store.unsubscribe` (and the same shape by `device.subscribe`'s result).
public struct UnsubscribeParams: JSONConvertible, Hashable {
    public var subscription: Int64

    public init(subscription: Int64) {
        self.subscription = subscription
    }

    public init(json: JSONValue) throws(RPCError) {
        subscription = try JSONFields(json).int64("subscription")
    }

    public var json: JSONValue { .object(["subscription": .int(subscription)]) }
}

/// The `store.changed` event: one committed transaction as it changed a subscription's set.
///
/// `{"subscription":7,"txn":1236,"author":"…","inserted":[{"id","version","values":{all}}],
/// "updated":[{"id","version","values":{changed keys}}],"deleted":["Reading/4"]}`; `author` is
/// `null` when the save named none. For a subscription with `"toMany":"changes"`, an updated entry carries its
/// changed to-many keys in `toManyChanges` (`StoreObject.toManyChanges`) instead of `values`.
public struct ChangedEvent: RPCEventPayload, Hashable {
    public static let method = "store.changed"

    public var subscription: Int64
    public var txn: Int64
    public var author: String?
    /// Objects that entered the set, with all their values.
    public var inserted: [StoreObject]
    /// Objects that stayed in the set and changed, with the changed keys' values.
    public var updated: [StoreObject]
    /// Objects that left the set.
    public var deleted: [ObjectID]

    public init(
        subscription: Int64, txn: Int64, author: String?, inserted: [StoreObject], updated: [StoreObject],
        deleted: [ObjectID]
    ) {
        self.subscription = subscription
        self.txn = txn
        self.author = author
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
    }

    public init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        subscription = try fields.int64("subscription")
        txn = try fields.int64("txn")
        author = try fields.optionalString("author")
        inserted = try fields.objects("inserted") { (object) throws(RPCError) in try StoreObject(fields: object) }
        updated = try fields.objects("updated") { (object) throws(RPCError) in try StoreObject(fields: object) }
        deleted = try fields.objectIDs("deleted")
    }

    public var json: JSONValue {
        .object([
            "subscription": .int(subscription), "txn": .int(txn), "author": author.map(JSONValue.string) ?? .null,
            "inserted": .array(inserted.map(\.json)), "updated": .array(updated.map(\.json)),
            "deleted": .array(deleted.map { .string($0.description) }),
        ])
    }
}
