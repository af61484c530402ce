import ContextBusSupport

/// `fleet.run` on fleetsvc's socket (an addition to PROTOCOL.md, which specifies the commands but not how a client
/// sends one; docs/fleet.md "Commands") → runs a `device.run` chain on another gateway's devicesvc through the
/// fleet's command queue and answers its result.
public enum FleetRun: RPCMethod {
    public typealias Params = FleetRunParams
    public typealias Result = FleetRunResult
    public static let name = "fleet.run"
}

/// `{"gateway":"a","request":{device.run params},"id"?:"…","timeoutMs"?:30000}`: `id` (1 to 128 letters, digits,
/// `-`, `_`) names the command across the fleet; a command sent again with an id seen before answers the first
/// result and runs nothing. Without one, fleetsvc makes one. `timeoutMs` is how long to wait for the reply.
public struct FleetRunParams: JSONConvertible, Hashable {
    public var gateway: String
    public var request: RunParams
    public var id: String?
    public var timeoutMs: Int

    public static let defaultTimeoutMs = 30_000

    public init(gateway: String, request: RunParams, id: String? = nil, timeoutMs: Int = Self.defaultTimeoutMs) {
        self.gateway = gateway
        self.request = request
        self.id = id
        self.timeoutMs = timeoutMs
    }

    public init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        gateway = try fields.string("gateway")
        guard ReplicaParams.isValidGatewayName(gateway) else {
            throw fields.error("gateway", "must be 1 to 64 letters, digits, '-' or '_'")
        }
        request = try RunParams(json: fields.required("request"))
        id = try fields.optionalString("id")
        if let id, !Self.isValidCommandID(id) {
            throw fields.error("id", "must be 1 to 128 letters, digits, '-' or '_'")
        }
        timeoutMs = try fields.optionalInt("timeoutMs", atLeast: 1) ?? Self.defaultTimeoutMs
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "gateway": .string(gateway), "request": request.json, "timeoutMs": .int(Int64(timeoutMs)),
        ]
        if let id { members["id"] = .string(id) }
        return .object(members)
    }

    /// A command id: 1 to 128 ASCII letters, digits, `-` or `_` (a key of the fleet's command memory).
    public static func isValidCommandID(_ id: String) -> Bool {
        (1...128).contains(id.utf8.count)
            && id.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-")
                    || byte == UInt8(ascii: "_")
            }
    }
}

/// `{"id","gateway","result":{device.run's result},"repeated":bool}`: `repeated` when the gateway had run that
/// command id before and answered its first result without running anything.
public struct FleetRunResult: JSONConvertible, Hashable {
    public var id: String
    public var gateway: String
    public var result: RecordedRunResult
    public var isRepeated: Bool

    public init(id: String, gateway: String, result: RecordedRunResult, isRepeated: Bool) {
        self.id = id
        self.gateway = gateway
        self.result = result
        self.isRepeated = isRepeated
    }

    public init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        id = try fields.string("id")
        gateway = try fields.string("gateway")
        result = try RecordedRunResult(json: fields.required("result"))
        isRepeated = try fields.optionalBool("repeated") ?? false
    }

    public var json: JSONValue {
        .object([
            "id": .string(id), "gateway": .string(gateway), "result": result.json, "repeated": .bool(isRepeated),
        ])
    }
}
