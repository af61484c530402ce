import ContextBusObjectGraph
import ContextBusSupport
public import Foundation

// `store.history` and `store.stats` (`docs/protocol.md`, "Store methods").

/// `store.history` `{"since":1200,"limit":100}` → the transactions after `since`, oldest first.
public enum StoreHistory: RPCMethod {
    public typealias Params = HistoryParams
    public typealias Result = HistoryResult
    public static let name = "store.history"
}

/// `store.stats` → the service's counters.
public enum StoreStats: RPCMethod {
    public typealias Params = EmptyObject
    public typealias Result = StatsResult
    public static let name = "store.stats"
}

/// `{"since":1200,"limit":100}`; `since` defaults to 0 (the whole history still kept), `limit` to the server's.
public struct HistoryParams: JSONConvertible, Hashable {
    public var since: Int64
    public var limit: Int?

    public init(since: Int64 = 0, limit: Int? = nil) {
        self.since = since
        self.limit = limit
    }

    public init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        since = try fields.optionalInt64("since") ?? 0
        if since < 0 { throw fields.error("since", "must be at least 0") }
        limit = try fields.optionalInt("limit", atLeast: 1)
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = ["since": .int(since)]
        if let limit { members["limit"] = .int(Int64(limit)) }
        return .object(members)
    }
}

/// One committed transaction: `{"txn","time","author","inserted":[ids],"updated":[ids],"deleted":[ids]}`,
/// `time` in RFC 3339 and `author` `null` when the save named none.
public struct HistoryTransaction: JSONConvertible, Hashable {
    public var txn: Int64
    public var time: Date
    public var author: String?
    public var inserted: [ObjectID]
    public var updated: [ObjectID]
    public var deleted: [ObjectID]

    public init(
        txn: Int64, time: Date, author: String?, inserted: [ObjectID], updated: [ObjectID], deleted: [ObjectID]
    ) {
        self.txn = txn
        self.time = time
        self.author = author
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
    }

    public init(json: JSONValue) throws(RPCError) {
        try self.init(fields: JSONFields(json))
    }

    init(fields: JSONFields) throws(RPCError) {
        txn = try fields.int64("txn")
        guard let time = Date(rfc3339: try fields.string("time")) else {
            throw fields.error("time", "expected an RFC 3339 date-time")
        }
        self.time = time
        author = try fields.optionalString("author")
        inserted = try fields.objectIDs("inserted")
        updated = try fields.objectIDs("updated")
        deleted = try fields.objectIDs("deleted")
    }

    public var json: JSONValue {
        .object([
            "txn": .int(txn), "time": .string(time.rfc3339String), "author": author.map(JSONValue.string) ?? .null,
            "inserted": .array(inserted.map { .string($0.description) }),
            "updated": .array(updated.map { .string($0.description) }),
            "deleted": .array(deleted.map { .string($0.description) }),
        ])
    }
}

/// `{"transactions":[…]}`.
public struct HistoryResult: JSONConvertible, Hashable {
    public var transactions: [HistoryTransaction]

    public init(transactions: [HistoryTransaction]) {
        self.transactions = transactions
    }

    public init(json: JSONValue) throws(RPCError) {
        transactions = try JSONFields(json).objects("transactions") { (fields) throws(RPCError) in
            try HistoryTransaction(fields: fields)
        }
    }

    public var json: JSONValue { .object(["transactions": .array(transactions.map(\.json))]) }
}

/// `store.stats`'s counters. docs/protocol.md lists what they cover but not their shape; this is it:
///
/// `{"connections":2,"subscriptions":5,"commits":120,"saves":180,"groupSizes":{"1":80,"2":20},
/// "history":{"oldest":1,"newest":120}}`: `groupSizes` maps a group-commit size to how many
/// commits had it; `history` is the range of transactions still kept (`null`s when empty).
/// Members a newer server adds are kept in `other`.
public struct StatsResult: JSONConvertible, Hashable {
    public var connections: Int64
    public var subscriptions: Int64
    /// Transactions committed (one group commit is one).
    public var commits: Int64
    /// `store.save` requests applied.
    public var saves: Int64
    /// Group-commit size → number of commits of that size.
    public var groupSizes: [Int: Int64]
    public var historyOldest: Int64?
    public var historyNewest: Int64?
    /// Any other counters, as sent.
    public var other: [String: JSONValue]

    public init(
        connections: Int64, subscriptions: Int64, commits: Int64, saves: Int64, groupSizes: [Int: Int64] = [:],
        historyOldest: Int64? = nil, historyNewest: Int64? = nil, other: [String: JSONValue] = [:]
    ) {
        self.connections = connections
        self.subscriptions = subscriptions
        self.commits = commits
        self.saves = saves
        self.groupSizes = groupSizes
        self.historyOldest = historyOldest
        self.historyNewest = historyNewest
        self.other = other
    }

    private static let knownKeys: Set<String> = [
        "connections", "subscriptions", "commits", "saves", "groupSizes", "history",
    ]

    public init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        connections = try fields.int64("connections")
        subscriptions = try fields.int64("subscriptions")
        commits = try fields.int64("commits")
        saves = try fields.int64("saves")
        var sizes: [Int: Int64] = [:]
        for (key, count) in try fields.optionalObject("groupSizes") ?? [:] {
            guard let size = Int(key), let n = count.intValue else {
                throw .invalidParams(field: "groupSizes.\(key)", message: "expected a size mapped to a count")
            }
            sizes[size] = n
        }
        groupSizes = sizes
        if fields.value("history") != nil {
            let history = try fields.nested("history")
            historyOldest = try history.optionalInt64("oldest")
            historyNewest = try history.optionalInt64("newest")
        }
        other = fields.members.filter { !Self.knownKeys.contains($0.key) }
    }

    public var json: JSONValue {
        var members = other
        members["connections"] = .int(connections)
        members["subscriptions"] = .int(subscriptions)
        members["commits"] = .int(commits)
        members["saves"] = .int(saves)
        var sizes: [String: JSONValue] = [:]
        for (size, count) in groupSizes { sizes[String(size)] = .int(count) }
        members["groupSizes"] = .object(sizes)
        members["history"] = .object([
            "oldest": historyOldest.map(JSONValue.int) ?? .null, "newest": historyNewest.map(JSONValue.int) ?? .null,
        ])
        return .object(members)
    }
}
