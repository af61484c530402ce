import ContextBusSupport
import ContextBusTransport

// The session methods: `bus.hello`, `bus.ping`, `bus.cancel`, and the `bus.overflow` event
// (`docs/protocol.md`, "Session").

/// `bus.hello`: must be the first request on a connection.
public enum BusHello: RPCMethod {
    public typealias Params = HelloParams
    public typealias Result = HelloResult
    public static let name = "bus.hello"
}

/// `bus.ping` → `{}`.
public enum BusPing: RPCMethod {
    public typealias Params = EmptyObject
    public typealias Result = EmptyObject
    public static let name = "bus.ping"
}

/// `bus.cancel` `{"request": <id>}` → `{}`.
public enum BusCancel: RPCMethod {
    public typealias Params = CancelParams
    public typealias Result = EmptyObject
    public static let name = "bus.cancel"
}

/// `{"protocol":1,"client":"name"}`.
public struct HelloParams: JSONConvertible, Hashable {
    /// The protocol version the client speaks (`protocol` on the wire). Whether the server
    /// speaks it is the server's check (`-32602` with `data.field` `protocol` if not).
    public var protocolVersion: Int
    /// The client's name, for logs.
    public var client: String?

    public init(protocolVersion: Int = BusProtocolVersion.current, client: String?) {
        self.protocolVersion = protocolVersion
        self.client = client
    }

    public init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        protocolVersion = try fields.int("protocol")
        client = try fields.optionalString("client")
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = ["protocol": .int(Int64(protocolVersion))]
        if let client { members["client"] = .string(client) }
        return .object(members)
    }
}

/// The peer's credentials in `bus.hello`'s result: `{"uid","gid","pid"}`.
extension PeerCredentials: JSONConvertible {
    public init(json: JSONValue) throws(RPCError) {
        try self.init(fields: JSONFields(json))
    }

    init(fields: JSONFields) throws(RPCError) {
        let uid = try fields.int64("uid")
        let gid = try fields.int64("gid")
        let pid = try fields.int64("pid")
        guard let u = UInt32(exactly: uid), let g = UInt32(exactly: gid), let p = Int32(exactly: pid) else {
            throw .invalidParams(field: "peer", message: "uid, gid and pid must fit their system types")
        }
        self.init(uid: u, gid: g, pid: p)
    }

    public var json: JSONValue { .object(["uid": .int(Int64(uid)), "gid": .int(Int64(gid)), "pid": .int(Int64(pid))]) }
}

/// `{"protocol":1,"server":"storesvc","version":"…","maxFrame":16777216,"maxInFlight":1024,"peer":{…}}`.
public struct HelloResult: JSONConvertible, Hashable {
    /// The protocol version the server speaks (`protocol` on the wire).
    public var protocolVersion: Int
    /// `storesvc` or `devicesvc`.
    public var server: String
    /// The server's software version.
    public var version: String
    /// The largest frame payload the server accepts.
    public var maxFrame: Int
    /// How many requests may be in flight on the connection before `429`.
    public var maxInFlight: Int
    public var peer: PeerCredentials

    public init(
        protocolVersion: Int = BusProtocolVersion.current, server: String, version: String, maxFrame: Int,
        maxInFlight: Int, peer: PeerCredentials
    ) {
        self.protocolVersion = protocolVersion
        self.server = server
        self.version = version
        self.maxFrame = maxFrame
        self.maxInFlight = maxInFlight
        self.peer = peer
    }

    public init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        protocolVersion = try fields.int("protocol")
        server = try fields.string("server")
        version = try fields.string("version")
        maxFrame = try fields.int("maxFrame")
        maxInFlight = try fields.int("maxInFlight")
        peer = try PeerCredentials(fields: fields.nested("peer"))
    }

    public var json: JSONValue {
        .object([
            "protocol": .int(Int64(protocolVersion)), "server": .string(server), "version": .string(version),
            "maxFrame": .int(Int64(maxFrame)), "maxInFlight": .int(Int64(maxInFlight)), "peer": peer.json,
        ])
    }
}

/// `{"request": <id>}`: the id of the request to cancel.
public struct CancelParams: JSONConvertible, Hashable {
    public var request: RPCID

    public init(request: RPCID) {
        self.request = request
    }

    public init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        guard let id = RPCID(json: try fields.required("request")) else {
            throw fields.error("request", "expected a request id (an integer or a string)")
        }
        request = id
    }

    public var json: JSONValue { .object(["request": request.json]) }
}

/// The `bus.overflow` event `{"dropped": N}`, sent (best effort) before the server drops a
/// connection whose outbound queue is full.
public struct OverflowEvent: RPCEventPayload, Hashable {
    public static let method = "bus.overflow"
    /// How many messages the server dropped.
    public var dropped: Int

    public init(dropped: Int) {
        self.dropped = dropped
    }

    public init(json: JSONValue) throws(RPCError) {
        dropped = try JSONFields(json).int("dropped")
    }

    public var json: JSONValue { .object(["dropped": .int(Int64(dropped))]) }
}
