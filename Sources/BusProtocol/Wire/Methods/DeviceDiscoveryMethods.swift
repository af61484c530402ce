import ContextBusSupport

// `device.adapters`, `device.list` and `device.scan` (`docs/protocol.md`, "Device methods").

/// `device.adapters` → `{"adapters":[{"name":"hci0","address","powered"}]}`.
public enum DeviceAdapters: RPCMethod {
    public typealias Params = EmptyObject
    public typealias Result = AdaptersResult
    public static let name = "device.adapters"
}

/// `device.list` `{"adapter"?:"hci0"}` → `{"devices":[…]}`.
public enum DeviceList: RPCMethod {
    public typealias Params = ListParams
    public typealias Result = DevicesResult
    public static let name = "device.list"
}

/// `device.scan` `{"seconds":5,"uuids"?:[],"rssi"?:-80}` → `{"devices":[…]}`.
public enum DeviceScan: RPCMethod {
    public typealias Params = ScanParams
    public typealias Result = DevicesResult
    public static let name = "device.scan"
}

/// One Bluetooth adapter: `{"name":"hci0","address":"…","powered":true}`.
public struct AdapterInfo: Sendable, Hashable {
    public var name: String
    public var address: BluetoothAddress
    public var powered: Bool

    public init(name: String, address: BluetoothAddress, powered: Bool) {
        self.name = name
        self.address = address
        self.powered = powered
    }

    init(fields: JSONFields) throws(RPCError) {
        name = try fields.string("name")
        address = try BluetoothAddress.read(fields, "address")
        powered = try fields.bool("powered")
    }

    var json: JSONValue {
        .object(["name": .string(name), "address": .string(address.string), "powered": .bool(powered)])
    }
}

/// `{"adapters":[…]}`.
public struct AdaptersResult: JSONConvertible, Hashable {
    public var adapters: [AdapterInfo]

    public init(adapters: [AdapterInfo]) {
        self.adapters = adapters
    }

    public init(json: JSONValue) throws(RPCError) {
        adapters = try JSONFields(json).objects("adapters") { (fields) throws(RPCError) in
            try AdapterInfo(fields: fields)
        }
    }

    public var json: JSONValue { .object(["adapters": .array(adapters.map(\.json))]) }
}

/// `{"adapter"?:"hci0"}`; without `adapter`, every adapter's devices.
public struct ListParams: JSONConvertible, Hashable {
    public var adapter: String?

    public init(adapter: String? = nil) {
        self.adapter = adapter
    }

    public init(json: JSONValue) throws(RPCError) {
        adapter = try JSONFields(json).optionalString("adapter")
    }

    public var json: JSONValue {
        guard let adapter else { return .object([:]) }
        return .object(["adapter": .string(adapter)])
    }
}

/// `{"seconds":5,"uuids"?:["180d"],"rssi"?:-80}`: discover for `seconds`, optionally only devices
/// advertising one of `uuids` and heard at `rssi` dBm or stronger.
public struct ScanParams: JSONConvertible, Hashable {
    public var seconds: Double
    public var uuids: [BluetoothUUID]
    public var rssi: Int?

    public init(seconds: Double, uuids: [BluetoothUUID] = [], rssi: Int? = nil) {
        self.seconds = seconds
        self.uuids = uuids
        self.rssi = rssi
    }

    public init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        seconds = try fields.double("seconds")
        guard seconds > 0 else { throw fields.error("seconds", "must be more than 0") }
        uuids = try BluetoothUUID.readList(fields, "uuids")
        rssi = try fields.optionalInt("rssi")
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "seconds": seconds == seconds.rounded() && abs(seconds) < 1e15 ? .int(Int64(seconds)) : .double(seconds)
        ]
        if !uuids.isEmpty { members["uuids"] = .array(uuids.map { .string($0.string) }) }
        if let rssi { members["rssi"] = .int(Int64(rssi)) }
        return .object(members)
    }
}

/// One device: `{"address","name","rssi"?,"connected","paired","services":[uuid]}`; `name` is
/// `null` when the device has not told it, `rssi` absent when it was not heard in a scan.
public struct DeviceInfo: Sendable, Hashable {
    public var address: BluetoothAddress
    public var name: String?
    public var rssi: Int?
    public var connected: Bool
    public var paired: Bool
    public var services: [BluetoothUUID]

    public init(
        address: BluetoothAddress, name: String?, rssi: Int? = nil, connected: Bool, paired: Bool,
        services: [BluetoothUUID] = []
    ) {
        self.address = address
        self.name = name
        self.rssi = rssi
        self.connected = connected
        self.paired = paired
        self.services = services
    }

    init(fields: JSONFields) throws(RPCError) {
        address = try BluetoothAddress.read(fields, "address")
        name = try fields.optionalString("name")
        rssi = try fields.optionalInt("rssi")
        connected = try fields.bool("connected")
        paired = try fields.bool("paired")
        services = try BluetoothUUID.readList(fields, "services")
    }

    var json: JSONValue {
        var members: [String: JSONValue] = [
            "address": .string(address.string), "name": name.map(JSONValue.string) ?? .null,
            "connected": .bool(connected), "paired": .bool(paired),
            "services": .array(services.map { .string($0.string) }),
        ]
        if let rssi { members["rssi"] = .int(Int64(rssi)) }
        return .object(members)
    }
}

/// `{"devices":[…]}`: the result of `device.list` and `device.scan`.
public struct DevicesResult: JSONConvertible, Hashable {
    public var devices: [DeviceInfo]

    public init(devices: [DeviceInfo]) {
        self.devices = devices
    }

    public init(json: JSONValue) throws(RPCError) {
        devices = try JSONFields(json).objects("devices") { (fields) throws(RPCError) in try DeviceInfo(fields: fields)
        }
    }

    public var json: JSONValue { .object(["devices": .array(devices.map(\.json))]) }
}
