import ContextBusObjectGraph
import ContextBusSupport

// Replication (docs/protocol.md, "Replication: the store's side of a fleet"; docs/fleet.md): what the fleet
// bridge reads and records in its gateway's store. Additions to PROTOCOL.md.

/// `store.replica` `{"gateway"?:"a","published"?:120,"position"?:88}` → the store's replica state.
///
/// With `gateway`, registers the store as that gateway (once; another name is `-32602`). `published` and
/// `position` record the bridge's progress (lower values than the recorded ones are ignored).
public enum StoreReplica: RPCMethod {
    public typealias Params = ReplicaParams
    public typealias Result = ReplicaStateResult
    public static let name = "store.replica"
}

/// `store.replicaChanges` `{"since":120,"limit"?:100}` → the transactions after `since` as full change sets, each
/// with its replica `clock`, and the fleet-wide IDs of the objects they name that came from other gateways.
public enum StoreReplicaChanges: RPCMethod {
    public typealias Params = HistoryParams
    public typealias Result = ReplicaChangesResult
    public static let name = "store.replicaChanges"
}

/// `store.replicaIDs` `{"fleetIDs":["b:Device/3"]}` → `{"ids":{"b:Device/3":"Device/7"}}`: the local objects
/// (alive or deleted) that fleet-wide IDs stand for, for those the store knows.
public enum StoreReplicaIDs: RPCMethod {
    public typealias Params = ReplicaIDsParams
    public typealias Result = ReplicaIDsResult
    public static let name = "store.replicaIDs"
}

public struct ReplicaParams: JSONConvertible, Hashable {
    public var gateway: String?
    public var published: Int64?
    public var position: Int64?

    public init(gateway: String? = nil, published: Int64? = nil, position: Int64? = nil) {
        self.gateway = gateway
        self.published = published
        self.position = position
    }

    public init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        gateway = try fields.optionalString("gateway")
        if let gateway, !ReplicaParams.isValidGatewayName(gateway) {
            throw fields.error("gateway", "must be 1 to 64 letters, digits, '-' or '_'")
        }
        published = try fields.optionalInt64("published")
        position = try fields.optionalInt64("position")
        if (published ?? 0) < 0 { throw fields.error("published", "must be at least 0") }
        if (position ?? 0) < 0 { throw fields.error("position", "must be at least 0") }
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = [:]
        if let gateway { members["gateway"] = .string(gateway) }
        if let published { members["published"] = .int(published) }
        if let position { members["position"] = .int(position) }
        return .object(members)
    }

    /// A gateway (or fleet) name: it becomes a NATS subject token and part of fleet-wide IDs.
    public static func isValidGatewayName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count)
            && name.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-")
                    || byte == UInt8(ascii: "_")
            }
    }
}

/// `{"gateway","published","position","applied":{"b":{"txn":17,"position":40}},"lastTxn"}`; `gateway` `null`
/// for a store that is not registered.
public struct ReplicaStateResult: JSONConvertible, Hashable {
    public var state: ReplicaState

    public init(_ state: ReplicaState) { self.state = state }

    public init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        var applied: [String: ReplicaState.Applied] = [:]
        for (gateway, value) in try fields.optionalObject("applied") ?? [:] {
            let entry = try JSONFields(value, path: fields.path(of: "applied") + "." + gateway)
            applied[gateway] = .init(txn: try entry.int64("txn"), position: try entry.optionalInt64("position") ?? 0)
        }
        state = ReplicaState(
            gateway: try fields.optionalString("gateway"), published: try fields.optionalInt64("published") ?? 0,
            position: try fields.optionalInt64("position") ?? 0, applied: applied,
            lastTxn: try fields.optionalInt64("lastTxn") ?? 0)
    }

    public var json: JSONValue {
        .object([
            "gateway": state.gateway.map(JSONValue.string) ?? .null, "published": .int(state.published),
            "position": .int(state.position), "lastTxn": .int(state.lastTxn),
            "applied": .object(
                state.applied.mapValues { .object(["txn": .int($0.txn), "position": .int($0.position)]) }),
        ])
    }
}

/// `{"transactions":[{change set…,"clock":1732790000123456}],"fleetIDs":{"Device/7":"b:Device/3"},"durable":121,
/// "lastTxn":124}`: `transactions` end at `durable`, the last transaction a sync made durable; those after it up to
/// `lastTxn` follow once the sync the call asked for has run.
public struct ReplicaChangesResult: ModelJSONConvertible {
    public var transactions: [(changes: ChangeSet, clock: Int64)]
    public var fleetIDs: [ObjectID: String]
    public var durable: Int64?
    public var lastTxn: Int64?

    public init(
        transactions: [(changes: ChangeSet, clock: Int64)], fleetIDs: [ObjectID: String], durable: Int64? = nil,
        lastTxn: Int64? = nil
    ) {
        self.transactions = transactions
        self.fleetIDs = fleetIDs
        self.durable = durable
        self.lastTxn = lastTxn
    }

    /// Whether the store holds committed transactions back until a sync makes them durable.
    public var isHoldingBack: Bool { (lastTxn ?? 0) > (durable ?? .max) }

    public init(json: JSONValue, model: Model) throws(RPCError) {
        let fields = try JSONFields(json)
        transactions = try fields.objects("transactions") { (transaction) throws(RPCError) in
            (try ChangeSet(json: .object(transaction.members), model: model), try transaction.int64("clock"))
        }
        var ids: [ObjectID: String] = [:]
        for (local, fleet) in try fields.optionalObject("fleetIDs") ?? [:] {
            guard let id = ObjectID(string: local), let fleetID = fleet.stringValue else {
                throw fields.error("fleetIDs", "expected object IDs mapped to fleet-wide IDs")
            }
            ids[id] = fleetID
        }
        fleetIDs = ids
        durable = try fields.optionalInt64("durable")
        lastTxn = try fields.optionalInt64("lastTxn")
    }

    public var json: JSONValue {
        var ids: [String: JSONValue] = [:]
        for (local, fleet) in fleetIDs { ids[local.description] = .string(fleet) }
        var members: [String: JSONValue] = [
            "transactions": .array(
                transactions.map { transaction in
                    guard case .object(var members) = transaction.changes.json else { return .null }
                    members["clock"] = .int(transaction.clock)
                    return .object(members)
                }),
            "fleetIDs": .object(ids),
        ]
        if let durable { members["durable"] = .int(durable) }
        if let lastTxn { members["lastTxn"] = .int(lastTxn) }
        return .object(members)
    }
}

public struct ReplicaIDsParams: JSONConvertible, Hashable {
    public var fleetIDs: [String]

    public init(fleetIDs: [String]) { self.fleetIDs = fleetIDs }

    public init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        guard fields.value("fleetIDs") != nil else { throw fields.error("fleetIDs", "is required") }
        fleetIDs = try fields.strings("fleetIDs")
    }

    public var json: JSONValue { .object(["fleetIDs": .array(fleetIDs.map(JSONValue.string))]) }
}

public struct ReplicaIDsResult: JSONConvertible, Hashable {
    public var ids: [String: ObjectID]

    public init(ids: [String: ObjectID]) { self.ids = ids }

    public init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        var ids: [String: ObjectID] = [:]
        for (fleet, local) in try fields.object("ids") {
            ids[fleet] = try JSONFields.objectID(local, path: fields.path(of: "ids") + "." + fleet)
        }
        self.ids = ids
    }

    public var json: JSONValue { .object(["ids": .object(ids.mapValues { .string($0.description) })]) }
}

extension SaveOrigin {
    /// `store.save`'s `"origin"`: `{"gateway","txn","clock","position"?,"fleetIDs"?:{"<ref>":"<fleet ID>"}}`,
    /// `fleetIDs` naming inserts of the same save by their `ref`.
    init(fields: JSONFields, insertsByRef: [String: ObjectID]) throws(RPCError) {
        let gateway = try fields.string("gateway")
        guard ReplicaParams.isValidGatewayName(gateway) else {
            throw fields.error("gateway", "must be 1 to 64 letters, digits, '-' or '_'")
        }
        let txn = try fields.int64("txn")
        guard txn > 0 else { throw fields.error("txn", "must be at least 1") }
        var fleetIDs: [ObjectID: String] = [:]
        for (ref, value) in try fields.optionalObject("fleetIDs") ?? [:] {
            guard let id = insertsByRef[ref] else {
                throw .invalidParams(field: fields.path(of: "fleetIDs") + "." + ref, message: "not a ref of this save")
            }
            guard let fleetID = value.stringValue, !fleetID.isEmpty else {
                throw .invalidParams(
                    field: fields.path(of: "fleetIDs") + "." + ref, message: "expected a fleet-wide ID")
            }
            fleetIDs[id] = fleetID
        }
        self.init(
            gateway: gateway, txn: txn, clock: try fields.int64("clock"),
            position: try fields.optionalInt64("position"),
            fleetIDs: fleetIDs)
    }

    var json: JSONValue {
        var members: [String: JSONValue] = [
            "gateway": .string(gateway), "txn": .int(txn), "clock": .int(clock),
            "fleetIDs": .object(
                Dictionary(
                    fleetIDs.map { ($0.key.temporaryReference ?? $0.key.description, JSONValue.string($0.value)) },
                    uniquingKeysWith: { first, _ in first })),
        ]
        if let position { members["position"] = .int(position) }
        return .object(members)
    }
}
