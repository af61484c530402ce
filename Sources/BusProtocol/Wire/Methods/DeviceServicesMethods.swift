import ContextBusSupport

// `device.services` (`docs/protocol.md`, "GATT database").

/// `device.services` `{"address","adapter"?}` → `{"services":[{"uuid","primary","characteristics":[…]}]}`.
public enum DeviceServices: RPCMethod {
    public typealias Params = ServicesParams
    public typealias Result = ServicesResult
    public static let name = "device.services"
}

/// `{"address","adapter"?:"hci0"}`.
public struct ServicesParams: JSONConvertible, Hashable {
    public var address: BluetoothAddress
    public var adapter: String?

    public init(address: BluetoothAddress, adapter: String? = nil) {
        self.address = address
        self.adapter = adapter
    }

    public init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        address = try BluetoothAddress.read(fields, "address")
        adapter = try readAdapter(fields)
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = ["address": .string(address.string)]
        if let adapter { members["adapter"] = .string(adapter) }
        return .object(members)
    }
}

/// One characteristic of a service: `{"uuid","flags":["read","notify",…],"descriptors":[uuid]}`.
public struct CharacteristicInfo: Sendable, Hashable {
    public var uuid: BluetoothUUID
    /// BlueZ's flags: `read`, `write`, `write-without-response`, `notify`, `indicate`, …
    public var flags: [String]
    public var descriptors: [BluetoothUUID]

    public init(uuid: BluetoothUUID, flags: [String], descriptors: [BluetoothUUID] = []) {
        self.uuid = uuid
        self.flags = flags
        self.descriptors = descriptors
    }

    init(fields: JSONFields) throws(RPCError) {
        uuid = try BluetoothUUID.read(fields, "uuid")
        flags = try fields.strings("flags")
        descriptors = try BluetoothUUID.readList(fields, "descriptors")
    }

    var json: JSONValue {
        .object([
            "uuid": .string(uuid.string), "flags": .array(flags.map(JSONValue.string)),
            "descriptors": .array(descriptors.map { .string($0.string) }),
        ])
    }
}

/// One GATT service: `{"uuid","primary","characteristics":[…]}`.
public struct ServiceInfo: Sendable, Hashable {
    public var uuid: BluetoothUUID
    public var primary: Bool
    public var characteristics: [CharacteristicInfo]

    public init(uuid: BluetoothUUID, primary: Bool, characteristics: [CharacteristicInfo]) {
        self.uuid = uuid
        self.primary = primary
        self.characteristics = characteristics
    }

    init(fields: JSONFields) throws(RPCError) {
        uuid = try BluetoothUUID.read(fields, "uuid")
        primary = try fields.optionalBool("primary") ?? true
        characteristics = try fields.objects("characteristics") { (fields) throws(RPCError) in
            try CharacteristicInfo(fields: fields)
        }
    }

    var json: JSONValue {
        .object([
            "uuid": .string(uuid.string), "primary": .bool(primary),
            "characteristics": .array(characteristics.map(\.json)),
        ])
    }
}

/// `{"services":[…]}`: the GATT database BlueZ resolved for the device, services and characteristics in handle
/// order.
public struct ServicesResult: JSONConvertible, Hashable {
    public var services: [ServiceInfo]

    public init(services: [ServiceInfo]) {
        self.services = services
    }

    public init(json: JSONValue) throws(RPCError) {
        services = try JSONFields(json).objects("services") { (fields) throws(RPCError) in
            try ServiceInfo(fields: fields)
        }
    }

    public var json: JSONValue { .object(["services": .array(services.map(\.json))]) }
}
