import ContextBusSupport

/// `fleet.status` on fleetsvc's socket (PROTOCOL.md, "Fleet") →
/// `{"gateway","fleet","state","connected","published","applied":{"<gateway>":txn},"pending","refused"}`, and the
/// additions `unknown`, `rejected`, `publications`, `gaps`, `commandsRun`, `commandsRefused`, `commandsRepeated`
/// (docs/protocol.md, "fleetsvc").
public enum FleetStatus: RPCMethod {
    public typealias Params = EmptyObject
    public typealias Result = FleetStatusResult
    public static let name = "fleet.status"
}

public struct FleetStatusResult: JSONConvertible, Hashable {
    public var gateway: String
    public var fleet: String
    /// `connecting` (to NATS, or to the stream) or `following` (`bootstrapping` is reserved for snapshots, not
    /// built yet).
    public var state: String
    public var isConnected: Bool
    public var published: Int64
    public var applied: [String: Int64]
    public var pending: Int64
    public var refused: Int64
    /// Every other counter, by name.
    public var counters: [String: Int64]

    public init(
        gateway: String, fleet: String, state: String, isConnected: Bool, published: Int64, applied: [String: Int64],
        pending: Int64, refused: Int64, counters: [String: Int64] = [:]
    ) {
        self.gateway = gateway
        self.fleet = fleet
        self.state = state
        self.isConnected = isConnected
        self.published = published
        self.applied = applied
        self.pending = pending
        self.refused = refused
        self.counters = counters
    }

    private static let knownKeys: Set<String> = [
        "gateway", "fleet", "state", "connected", "published", "applied", "pending", "refused",
    ]

    public init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        gateway = try fields.string("gateway")
        fleet = try fields.string("fleet")
        state = try fields.string("state")
        isConnected = try fields.bool("connected")
        published = try fields.int64("published")
        var applied: [String: Int64] = [:]
        for (name, txn) in try fields.object("applied") {
            guard let txn = txn.intValue else { throw fields.error("applied", "expected gateway names mapped to txns") }
            applied[name] = txn
        }
        self.applied = applied
        pending = try fields.int64("pending")
        refused = try fields.int64("refused")
        var counters: [String: Int64] = [:]
        for (key, value) in fields.members where !Self.knownKeys.contains(key) {
            if let number = value.intValue { counters[key] = number }
        }
        self.counters = counters
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = counters.mapValues(JSONValue.int)
        members["gateway"] = .string(gateway)
        members["fleet"] = .string(fleet)
        members["state"] = .string(state)
        members["connected"] = .bool(isConnected)
        members["published"] = .int(published)
        members["applied"] = .object(applied.mapValues(JSONValue.int))
        members["pending"] = .int(pending)
        members["refused"] = .int(refused)
        return .object(members)
    }
}
