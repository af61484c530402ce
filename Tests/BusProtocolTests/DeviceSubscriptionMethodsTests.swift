import BusProtocol
import Foundation
import Shared
import TestSupport
import Testing

@Suite struct DeviceSubscriptionMethodsTests {
    @Test func subscribeParamsAndResultMatchTheProtocol() throws {
        #expect(
            try DeviceSubscribeParams(json: json(#"{"address":"AA:BB:CC:DD:EE:FF"}"#)).address?.string
                == "AA:BB:CC:DD:EE:FF")
        #expect(try DeviceSubscribeParams(json: json("{}")).address == nil)
        #expect(
            invalidField { () throws(RPCError) in _ = try DeviceSubscribeParams(json: json(#"{"address":"x"}"#)) }
                == "address")
        #expect(DeviceSubscribeResult(subscription: 3).json == json(#"{"subscription":3}"#))
        #expect(try DeviceSubscribeResult(json: json(#"{"subscription":3}"#)).subscription == 3)
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
        #expect(
            invalidField { () throws(RPCError) in
                _ = try DeviceEvent(json: json(#"{"subscription":3,"address":"AA:BB:CC:DD:EE:FF","kind":"paired"}"#))
            } == "kind")
    }
}
