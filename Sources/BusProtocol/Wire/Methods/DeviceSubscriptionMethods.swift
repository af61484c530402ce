import ContextBusSupport
public import Foundation

// `device.subscribe` and the `device.event` event (`docs/protocol.md`, "Device methods").

/// `device.subscribe` `{"address"?:…}` → `{"subscription":3}`, then `device.event` events.
public enum DeviceSubscribe: RPCMethod {
    public typealias Params = DeviceSubscribeParams
    public typealias Result = DeviceSubscribeResult
    public static let name = "device.subscribe"
}

/// `{"address"?:"AA:BB:CC:DD:EE:FF"}`; without `address`, every device.
public struct DeviceSubscribeParams: JSONConvertible, Hashable {
    public var address: BluetoothAddress?

    public init(address: BluetoothAddress? = nil) {
        self.address = address
    }

    public init(json: JSONValue) throws(RPCError) {
        address = try BluetoothAddress.readOptional(JSONFields(json), "address")
    }

    public var json: JSONValue {
        guard let address else { return .object([:]) }
        return .object(["address": .string(address.string)])
    }
}

/// `{"subscription":3}`.
public struct DeviceSubscribeResult: JSONConvertible, Hashable {
    public var subscription: Int64

    public init(subscription: Int64) {
        self.subscription = subscription
    }

    public init(json: JSONValue) throws(RPCError) {
        subscription = try JSONFields(json).int64("subscription")
    }

    public var json: JSONValue { .object(["subscription": .int(subscription)]) }
}

/// The `device.event` event:
/// `{"subscription":3,"address":"…","kind":"connected"|"disconnected"|"value","characteristic"?,"value"?}`.
public struct DeviceEvent: RPCEventPayload, Hashable {
    public static let method = "device.event"

    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case connected, disconnected, value
    }

    public var subscription: Int64
    public var address: BluetoothAddress
    public var kind: Kind
    /// The characteristic whose value changed, for `value` events.
    public var characteristic: BluetoothUUID?
    /// The new value, for `value` events.
    public var value: Data?

    public init(
        subscription: Int64, address: BluetoothAddress, kind: Kind, characteristic: BluetoothUUID? = nil,
        value: Data? = nil
    ) {
        self.subscription = subscription
        self.address = address
        self.kind = kind
        self.characteristic = characteristic
        self.value = value
    }

    public init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        subscription = try fields.int64("subscription")
        address = try BluetoothAddress.read(fields, "address")
        guard let kind = try fields.optionalEnum("kind", cases: Kind.allCases) else {
            throw fields.error("kind", "is required")
        }
        self.kind = kind
        characteristic = try BluetoothUUID.readOptional(fields, "characteristic")
        value = try readBase64(fields, "value")
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "subscription": .int(subscription), "address": .string(address.string), "kind": .string(kind.rawValue),
        ]
        if let characteristic { members["characteristic"] = .string(characteristic.string) }
        if let value { members["value"] = .string(value.base64EncodedString()) }
        return .object(members)
    }
}
