import Foundation
import TestSupport
import Testing

@testable import ContextBusWire

struct DeviceSubscriptionMethodsTests {
    @Test func subscribeParamsAndResultMatchTheProtocol() throws {
        expectEqual(
            try DeviceSubscribeParams(json: json(#"{"address":"AA:BB:CC:DD:EE:FF"}"#)).address?.string,
            "AA:BB:CC:DD:EE:FF")
        expectNil(try DeviceSubscribeParams(json: json("{}")).address)
        expectEqual(
            invalidField { () throws(RPCError) in _ = try DeviceSubscribeParams(json: json(#"{"address":"x"}"#)) },
            "address")
        expectEqual(DeviceSubscribeResult(subscription: 3).json, json(#"{"subscription":3}"#))
        expectEqual(try DeviceSubscribeResult(json: json(#"{"subscription":3}"#)).subscription, 3)
    }

    @Test func deviceEventMatchesTheProtocolFieldForField() throws {
        let value = json(
            #"{"subscription":3,"address":"AA:BB:CC:DD:EE:FF","kind":"value","characteristic":"2a37","value":"AQ=="}"#)
        let event = try DeviceEvent(json: value)
        expectEqual(event.subscription, 3)
        expectEqual(event.kind, .value)
        expectEqual(event.characteristic, BluetoothUUID("2a37"))
        expectEqual(event.value, Data([1]))
        expectEqual(event.json, value)
        expectEqual(RPCEvent(event).method, "device.event")

        let connected = json(#"{"subscription":3,"address":"AA:BB:CC:DD:EE:FF","kind":"connected"}"#)
        try expectEqual(DeviceEvent(json: connected).json, connected)
        expectEqual(
            invalidField { () throws(RPCError) in
                _ = try DeviceEvent(json: json(#"{"subscription":3,"address":"AA:BB:CC:DD:EE:FF","kind":"paired"}"#))
            }, "kind")
    }
}
