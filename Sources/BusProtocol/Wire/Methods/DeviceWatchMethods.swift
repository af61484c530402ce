import ContextBusSupport
public import Foundation

// `device.watch`, `device.unwatch` and the `device.value` and `device.link` events (`docs/protocol.md`, "Watches").

/// `device.watch` `{"address","notify":["2a37"],"record"?:false,"reconnect"?:{"minMs":500,"maxMs":30000}}` →
/// `{"watch":4}`, then `device.value` and `device.link` events.
public enum DeviceWatch: RPCMethod {
    public typealias Params = WatchParams
    public typealias Result = DeviceWatchResult
    public static let name = "device.watch"
}

/// `device.unwatch` `{"watch":4}` → `{}`.
public enum DeviceUnwatch: RPCMethod {
    public typealias Params = WatchReference
    public typealias Result = EmptyObject
    public static let name = "device.unwatch"
}

/// How a watch reconnects after its link is lost: the first attempt after about `minMs`, each next delay doubled
/// (with up to 20 % jitter), capped at `maxMs`.
public struct ReconnectPolicy: Sendable, Hashable {
    public var minMs: Int
    public var maxMs: Int

    /// 500 ms, then 1, 2, 4, … s up to 30 s.
    public static let standard = ReconnectPolicy(minMs: 500, maxMs: 30_000)

    public init(minMs: Int, maxMs: Int) {
        self.minMs = minMs
        self.maxMs = maxMs
    }

    init(fields: JSONFields) throws(RPCError) {
        let minMs = try fields.optionalInt("minMs", atLeast: 1) ?? Self.standard.minMs
        let maxMs = try fields.optionalInt("maxMs", atLeast: 1) ?? max(Self.standard.maxMs, minMs)
        guard maxMs >= minMs else { throw fields.error("maxMs", "must be at least minMs (\(minMs))") }
        guard maxMs <= 86_400_000 else { throw fields.error("maxMs", "must be at most 86400000 (a day)") }
        self.init(minMs: minMs, maxMs: maxMs)
    }

    var json: JSONValue { .object(["minMs": .int(Int64(minMs)), "maxMs": .int(Int64(maxMs))]) }
}

/// `{"address","notify":[uuid],"record"?:false,"reconnect"?:{"minMs","maxMs"},"adapter"?:"hci0"}`; `notify` must not
/// be empty.
public struct WatchParams: JSONConvertible, Hashable {
    public var address: BluetoothAddress
    /// The characteristics whose notifications the watch wants.
    public var notify: [BluetoothUUID]
    /// Whether every value is saved to the store service as a `Reading`.
    public var record: Bool
    public var reconnect: ReconnectPolicy
    /// The adapter to use (`hci0`); `nil` for the service's.
    public var adapter: String?

    public init(
        address: BluetoothAddress, notify: [BluetoothUUID], record: Bool = false,
        reconnect: ReconnectPolicy = .standard, adapter: String? = nil
    ) {
        self.address = address
        self.notify = notify
        self.record = record
        self.reconnect = reconnect
        self.adapter = adapter
    }

    public init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        address = try BluetoothAddress.read(fields, "address")
        guard fields.value("notify") != nil else { throw fields.error("notify", "is required") }
        notify = try BluetoothUUID.readList(fields, "notify")
        guard !notify.isEmpty else { throw fields.error("notify", "must not be empty") }
        record = try fields.optionalBool("record") ?? false
        reconnect =
            try fields.value("reconnect") == nil ? .standard : ReconnectPolicy(fields: fields.nested("reconnect"))
        adapter = try readAdapter(fields)
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "address": .string(address.string), "notify": .array(notify.map { .string($0.string) }),
            "record": .bool(record), "reconnect": reconnect.json,
        ]
        if let adapter { members["adapter"] = .string(adapter) }
        return .object(members)
    }
}

/// `{"watch":4}`: the result of `device.watch`.
public struct DeviceWatchResult: JSONConvertible, Hashable {
    public var watch: Int64

    public init(watch: Int64) {
        self.watch = watch
    }

    public init(json: JSONValue) throws(RPCError) {
        watch = try JSONFields(json).int64("watch")
    }

    public var json: JSONValue { .object(["watch": .int(watch)]) }
}

/// `{"watch":4}`: the params of `device.unwatch`.
public struct WatchReference: JSONConvertible, Hashable {
    public var watch: Int64

    public init(watch: Int64) {
        self.watch = watch
    }

    public init(json: JSONValue) throws(RPCError) {
        watch = try JSONFields(json).int64("watch")
    }

    public var json: JSONValue { .object(["watch": .int(watch)]) }
}

/// The `device.value` event: one notification BlueZ delivered on a watch's link,
/// `{"watch":4,"address","characteristic","value","number"?,"unit"?}`.
public struct DeviceValueEvent: RPCEventPayload, Hashable {
    public static let method = "device.value"

    public var watch: Int64
    public var address: BluetoothAddress
    /// The characteristic as the watch named it.
    public var characteristic: BluetoothUUID
    public var value: Data
    public var number: Double?
    public var unit: String?

    public init(
        watch: Int64, address: BluetoothAddress, characteristic: BluetoothUUID, value: Data, number: Double? = nil,
        unit: String? = nil
    ) {
        self.watch = watch
        self.address = address
        self.characteristic = characteristic
        self.value = value
        self.number = number
        self.unit = unit
    }

    public init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        watch = try fields.int64("watch")
        address = try BluetoothAddress.read(fields, "address")
        characteristic = try BluetoothUUID.read(fields, "characteristic")
        guard let value = try readBase64(fields, "value") else { throw fields.error("value", "is required") }
        self.value = value
        number = try fields.optionalDouble("number")
        unit = try fields.optionalString("unit")
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "watch": .int(watch), "address": .string(address.string), "characteristic": .string(characteristic.string),
            "value": .string(value.base64EncodedString()),
        ]
        if let number { members["number"] = .double(number) }
        if let unit { members["unit"] = .string(unit) }
        return .object(members)
    }
}

/// The `device.link` event: `{"watch":4,"address","state":"connected"|"disconnected"|"reconnecting","attempt"?}`.
///
/// One `reconnecting` per attempt, `attempt` counting from 1 since the link was lost; `error` (an addition to
/// PROTOCOL.md) says why a link was given up or an attempt failed, when there is a reason to tell.
public struct DeviceLinkEvent: RPCEventPayload, Hashable {
    public static let method = "device.link"

    public enum State: String, Sendable, Hashable, CaseIterable {
        case connected, disconnected, reconnecting
    }

    public var watch: Int64
    public var address: BluetoothAddress
    public var state: State
    public var attempt: Int?
    public var error: String?

    public init(watch: Int64, address: BluetoothAddress, state: State, attempt: Int? = nil, error: String? = nil) {
        self.watch = watch
        self.address = address
        self.state = state
        self.attempt = attempt
        self.error = error
    }

    public init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        watch = try fields.int64("watch")
        address = try BluetoothAddress.read(fields, "address")
        guard let state = try fields.optionalEnum("state", cases: State.allCases) else {
            throw fields.error("state", "is required")
        }
        self.state = state
        attempt = try fields.optionalInt("attempt")
        error = try fields.optionalString("error")
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "watch": .int(watch), "address": .string(address.string), "state": .string(state.rawValue),
        ]
        if let attempt { members["attempt"] = .int(Int64(attempt)) }
        if let error { members["error"] = .string(error) }
        return .object(members)
    }
}
