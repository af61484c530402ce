import ContextBusSupport
public import Foundation

// `device.discover`, `device.undiscover` and the `device.advertisement` event (`docs/protocol.md`, "Discovery").

/// `device.discover` `{"seconds"?:0,"uuids"?:[],"rssi"?:-90,"duplicates"?:false,"record"?:false}` →
/// `{"discovery":9}`, then `device.advertisement` events.
public enum DeviceDiscover: RPCMethod {
    public typealias Params = DiscoverParams
    public typealias Result = DiscoverResult
    public static let name = "device.discover"
}

/// `device.undiscover` `{"discovery":9}` → `{"advertisements":N,"skipped":M}` (what the discovery saw).
public enum DeviceUndiscover: RPCMethod {
    public typealias Params = DiscoveryReference
    public typealias Result = DiscoveryCounts
    public static let name = "device.undiscover"
}

/// `{"seconds"?:0,"uuids"?:[],"rssi"?:-90,"duplicates"?:false,"record"?:false,"adapter"?:"hci0"}`.
///
/// `seconds` 0 (the default) runs until `device.undiscover` or the connection closes.
public struct DiscoverParams: JSONConvertible, Hashable {
    public var seconds: Double
    /// Only devices advertising one of these services (empty: any).
    public var uuids: [BluetoothUUID]
    /// Only devices heard at this RSSI (dBm) or stronger: -90 unless given (PROTOCOL.md); -127, the weakest BlueZ
    /// reports, for any device.
    public var rssi: Int
    /// Whether every advertisement BlueZ reports is an event (true), or only those whose data changed (false).
    public var duplicates: Bool
    /// Whether each decoded value is saved as a `Reading`.
    public var record: Bool
    /// The adapter to use (`hci0`); `nil` for the service's.
    public var adapter: String?

    /// The RSSI threshold when `rssi` is not given.
    public static let defaultRSSI = -90

    public init(
        seconds: Double = 0, uuids: [BluetoothUUID] = [], rssi: Int = defaultRSSI, duplicates: Bool = false,
        record: Bool = false, adapter: String? = nil
    ) {
        self.seconds = seconds
        self.uuids = uuids
        self.rssi = rssi
        self.duplicates = duplicates
        self.record = record
        self.adapter = adapter
    }

    public init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        seconds = try fields.optionalDouble("seconds") ?? 0
        guard seconds >= 0, seconds <= 86_400 else { throw fields.error("seconds", "must be from 0 to 86400") }
        uuids = try BluetoothUUID.readList(fields, "uuids")
        rssi = try fields.optionalInt("rssi") ?? Self.defaultRSSI
        guard (-127...20).contains(rssi) else { throw fields.error("rssi", "must be from -127 to 20 (dBm)") }
        duplicates = try fields.optionalBool("duplicates") ?? false
        record = try fields.optionalBool("record") ?? false
        adapter = try readAdapter(fields)
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "seconds": seconds == seconds.rounded() ? .int(Int64(seconds)) : .double(seconds),
            "rssi": .int(Int64(rssi)), "duplicates": .bool(duplicates), "record": .bool(record),
        ]
        if !uuids.isEmpty { members["uuids"] = .array(uuids.map { .string($0.string) }) }
        if let adapter { members["adapter"] = .string(adapter) }
        return .object(members)
    }
}

/// `{"discovery":9}`: the result of `device.discover`.
public struct DiscoverResult: JSONConvertible, Hashable {
    public var discovery: Int64

    public init(discovery: Int64) {
        self.discovery = discovery
    }

    public init(json: JSONValue) throws(RPCError) {
        discovery = try JSONFields(json).int64("discovery")
    }

    public var json: JSONValue { .object(["discovery": .int(discovery)]) }
}

/// `{"discovery":9}`: the params of `device.undiscover`.
public struct DiscoveryReference: JSONConvertible, Hashable {
    public var discovery: Int64

    public init(discovery: Int64) {
        self.discovery = discovery
    }

    public init(json: JSONValue) throws(RPCError) {
        discovery = try JSONFields(json).int64("discovery")
    }

    public var json: JSONValue { .object(["discovery": .int(discovery)]) }
}

/// `{"advertisements":N,"skipped":M}`: what a discovery sent, and the advertised payloads it could not decode
/// (malformed manufacturer or service data, BTHome objects it did not know or that were cut short, encrypted BTHome).
public struct DiscoveryCounts: JSONConvertible, Hashable {
    public var advertisements: Int
    public var skipped: Int

    public init(advertisements: Int = 0, skipped: Int = 0) {
        self.advertisements = advertisements
        self.skipped = skipped
    }

    public init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        advertisements = try fields.optionalInt("advertisements") ?? 0
        skipped = try fields.optionalInt("skipped") ?? 0
    }

    public var json: JSONValue {
        .object(["advertisements": .int(Int64(advertisements)), "skipped": .int(Int64(skipped))])
    }
}

/// One value decoded from advertised data: `{"name":"temperature","number":21.5,"unit":"°C"}`; `unit` is absent for
/// unitless values (counts, binary sensors).
public struct DecodedValue: Sendable, Hashable {
    public var name: String
    public var number: Double
    public var unit: String?

    public init(name: String, number: Double, unit: String? = nil) {
        self.name = name
        self.number = number
        self.unit = unit
    }

    init(fields: JSONFields) throws(RPCError) {
        name = try fields.string("name")
        number = try fields.double("number")
        unit = try fields.optionalString("unit")
    }

    var json: JSONValue {
        var members: [String: JSONValue] = ["name": .string(name), "number": .double(number)]
        if let unit { members["unit"] = .string(unit) }
        return .object(members)
    }
}

/// The `device.advertisement` event: the device's whole advertised data as BlueZ holds it when the event is sent,
/// `{"discovery":9,"address","name"?,"rssi","txPower"?,"manufacturerData"?:{"004c":"<base64>"},
/// "serviceData"?:{"<128-bit uuid>":"<base64>"},"services"?:[uuid],"decoded"?:[{"name","number","unit"?}]}`.
public struct AdvertisementEvent: RPCEventPayload, Hashable {
    public static let method = "device.advertisement"

    public var discovery: Int64
    public var address: BluetoothAddress
    public var name: String?
    public var rssi: Int
    public var txPower: Int?
    /// By company id as 4 lowercase hex digits (`"004c"`).
    public var manufacturerData: [String: Data]
    /// By full lowercase 128-bit UUID.
    public var serviceData: [String: Data]
    public var services: [BluetoothUUID]
    public var decoded: [DecodedValue]

    public init(
        discovery: Int64, address: BluetoothAddress, name: String? = nil, rssi: Int, txPower: Int? = nil,
        manufacturerData: [String: Data] = [:], serviceData: [String: Data] = [:], services: [BluetoothUUID] = [],
        decoded: [DecodedValue] = []
    ) {
        self.discovery = discovery
        self.address = address
        self.name = name
        self.rssi = rssi
        self.txPower = txPower
        self.manufacturerData = manufacturerData
        self.serviceData = serviceData
        self.services = services
        self.decoded = decoded
    }

    public init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        discovery = try fields.int64("discovery")
        address = try BluetoothAddress.read(fields, "address")
        name = try fields.optionalString("name")
        rssi = try fields.int("rssi")
        txPower = try fields.optionalInt("txPower")
        manufacturerData = try Self.dataMap(fields, "manufacturerData")
        serviceData = try Self.dataMap(fields, "serviceData")
        services = try BluetoothUUID.readList(fields, "services")
        decoded = try fields.objects("decoded") { (fields) throws(RPCError) in try DecodedValue(fields: fields) }
    }

    private static func dataMap(_ fields: JSONFields, _ key: String) throws(RPCError) -> [String: Data] {
        var result: [String: Data] = [:]
        for (name, value) in try fields.optionalObject(key) ?? [:] {
            guard case .string(let text) = value, let data = Data(base64Encoded: text) else {
                throw .invalidParams(field: fields.path(of: key) + "." + name, message: "expected base64")
            }
            result[name] = data
        }
        return result
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "discovery": .int(discovery), "address": .string(address.string), "rssi": .int(Int64(rssi)),
        ]
        if let name { members["name"] = .string(name) }
        if let txPower { members["txPower"] = .int(Int64(txPower)) }
        if !manufacturerData.isEmpty {
            members["manufacturerData"] = .object(manufacturerData.mapValues { .string($0.base64EncodedString()) })
        }
        if !serviceData.isEmpty {
            members["serviceData"] = .object(serviceData.mapValues { .string($0.base64EncodedString()) })
        }
        if !services.isEmpty { members["services"] = .array(services.map { .string($0.string) }) }
        if !decoded.isEmpty { members["decoded"] = .array(decoded.map(\.json)) }
        return .object(members)
    }
}

/// The `device.discoveryEnded` event (an addition to PROTOCOL.md): a discovery ended by itself — its `seconds` were up,
/// or BlueZ failed it (`error`) — with what it sent and skipped: `{"discovery":9,"advertisements":N,"skipped":M}`.
/// A discovery ended by `device.undiscover` or its connection closing sends none.
public struct DiscoveryEndedEvent: RPCEventPayload, Hashable {
    public static let method = "device.discoveryEnded"

    public var discovery: Int64
    public var advertisements: Int
    public var skipped: Int
    public var error: String?

    public init(discovery: Int64, advertisements: Int, skipped: Int, error: String? = nil) {
        self.discovery = discovery
        self.advertisements = advertisements
        self.skipped = skipped
        self.error = error
    }

    public init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        discovery = try fields.int64("discovery")
        advertisements = try fields.optionalInt("advertisements") ?? 0
        skipped = try fields.optionalInt("skipped") ?? 0
        error = try fields.optionalString("error")
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "discovery": .int(discovery), "advertisements": .int(Int64(advertisements)),
            "skipped": .int(Int64(skipped)),
        ]
        if let error { members["error"] = .string(error) }
        return .object(members)
    }
}
