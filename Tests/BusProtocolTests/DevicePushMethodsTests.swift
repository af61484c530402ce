import Foundation
import TestSupport
import Testing

@testable import ContextBusWire

/// The wire forms of PROTOCOL.md's "Devices that push": watches, discovery, services, descriptor steps, decoded values.
struct DevicePushMethodsTests {
    @Test func watchParamsMatchTheProtocolExampleAndDefaultTheRest() throws {
        let example = json(
            #"{"address":"AA:BB:CC:DD:EE:FF","notify":["2a37"],"record":true,"reconnect":{"minMs":500,"maxMs":30000}}"#)
        let params = try WatchParams(json: example)
        expectEqual(params.notify, [BluetoothUUID("2a37")!])
        expectEqual(params.record, true)
        expectEqual(params.reconnect, ReconnectPolicy(minMs: 500, maxMs: 30000))
        expectEqual(try WatchParams(json: params.json), params)
        let minimal = try WatchParams(
            json: json(#"{"address":"AA:BB:CC:DD:EE:FF","notify":["2a19"],"adapter":"hci1"}"#))
        expectEqual(minimal.record, false)
        expectEqual(minimal.reconnect, .standard)
        expectEqual(minimal.adapter, "hci1")
        let onlyMin = try WatchParams(
            json: json(#"{"address":"AA:BB:CC:DD:EE:FF","notify":["2a19"],"reconnect":{"minMs":40000}}"#))
        expectEqual(onlyMin.reconnect, ReconnectPolicy(minMs: 40000, maxMs: 40000))
    }

    @Test(arguments: [
        (#"{"notify":["2a19"]}"#, "address"),
        (#"{"address":"AA:BB:CC:DD:EE:FF"}"#, "notify"),
        (#"{"address":"AA:BB:CC:DD:EE:FF","notify":[]}"#, "notify"),
        (#"{"address":"AA:BB:CC:DD:EE:FF","notify":["heart"]}"#, "notify[0]"),
        (#"{"address":"AA:BB:CC:DD:EE:FF","notify":["2a19"],"reconnect":{"minMs":0}}"#, "reconnect.minMs"),
        (
            #"{"address":"AA:BB:CC:DD:EE:FF","notify":["2a19"],"reconnect":{"minMs":900,"maxMs":100}}"#,
            "reconnect.maxMs"
        ),
        (#"{"address":"AA:BB:CC:DD:EE:FF","notify":["2a19"],"adapter":"hci/0"}"#, "adapter"),
    ])
    func badWatchParamsNameTheField(text: String, field: String) {
        expectEqual(invalidField { () throws(RPCError) in _ = try WatchParams(json: json(text)) }, field)
    }

    @Test func watchEventsRoundTrip() throws {
        let value = DeviceValueEvent(
            watch: 4, address: BluetoothAddress("AA:BB:CC:DD:EE:01")!, characteristic: BluetoothUUID("2a37")!,
            value: Data([0, 72]), number: 72, unit: "bpm")
        expectEqual(
            value.json,
            json(
                #"{"watch":4,"address":"AA:BB:CC:DD:EE:01","characteristic":"2a37","value":"AEg=","number":72.0,"unit":"bpm"}"#
            ))
        expectEqual(try DeviceValueEvent(json: value.json), value)
        let link = DeviceLinkEvent(
            watch: 4, address: BluetoothAddress("AA:BB:CC:DD:EE:01")!, state: .reconnecting, attempt: 2)
        expectEqual(link.json, json(#"{"watch":4,"address":"AA:BB:CC:DD:EE:01","state":"reconnecting","attempt":2}"#))
        expectEqual(try DeviceLinkEvent(json: link.json), link)
        expectEqual(DeviceValueEvent.method, "device.value")
        expectEqual(DeviceLinkEvent.method, "device.link")
    }

    @Test func discoverParamsDefaultToAnOpenEndedDiscoveryAtMinus90DBmWithoutDuplicates() throws {
        let params = try DiscoverParams(json: json("{}"))
        expectEqual(params, DiscoverParams())
        expectEqual(params.seconds, 0)
        expectEqual(params.rssi, -90)
        expectTrue(!params.duplicates && !params.record && params.uuids.isEmpty)
        expectEqual(params.json, json(#"{"seconds":0,"rssi":-90,"duplicates":false,"record":false}"#))
        let full = try DiscoverParams(
            json: json(#"{"seconds":2.5,"uuids":["fcd2"],"rssi":-127,"duplicates":true,"record":true}"#))
        expectEqual(full.seconds, 2.5)
        expectEqual(full.uuids, [BluetoothUUID("fcd2")!])
        expectEqual(full.rssi, -127)
        expectTrue(full.duplicates && full.record)
        expectEqual(try DiscoverParams(json: full.json), full)
        #expect(throws: RPCError.self) { try DiscoverParams(json: json(#"{"seconds":-1}"#)) }
        #expect(throws: RPCError.self) { try DiscoverParams(json: json(#"{"rssi":-300}"#)) }
        #expect(throws: RPCError.self) { try DiscoverParams(json: json(#"{"rssi":21}"#)) }
    }

    @Test func advertisementEventsCarryTheAdvertisedDataByItsProtocolKeys() throws {
        let event = AdvertisementEvent(
            discovery: 9, address: BluetoothAddress("AA:BB:CC:DD:EE:05")!, name: "BTHome-5", rssi: -60, txPower: 4,
            manufacturerData: ["ffff": Data([1])], serviceData: ["0000fcd2-0000-1000-8000-00805f9b34fb": Data([0x40])],
            services: [BluetoothUUID("0000fcd2-0000-1000-8000-00805f9b34fb")!],
            decoded: [DecodedValue(name: "temperature", number: 21.5, unit: "°C")])
        let fields = try JSONFields(event.json)
        expectEqual(fields.value("manufacturerData"), json(#"{"ffff":"AQ=="}"#))
        expectEqual(fields.value("decoded"), json(#"[{"name":"temperature","number":21.5,"unit":"°C"}]"#))
        expectEqual(try AdvertisementEvent(json: event.json), event)
        expectEqual(
            AdvertisementEvent(discovery: 1, address: BluetoothAddress("AA:BB:CC:DD:EE:05")!, rssi: -1).json,
            json(#"{"discovery":1,"address":"AA:BB:CC:DD:EE:05","rssi":-1}"#))
    }

    @Test func servicesAndDescriptorStepsRoundTrip() throws {
        let result = ServicesResult(services: [
            ServiceInfo(
                uuid: BluetoothUUID("0000180f-0000-1000-8000-00805f9b34fb")!, primary: true,
                characteristics: [
                    CharacteristicInfo(
                        uuid: BluetoothUUID("00002a19-0000-1000-8000-00805f9b34fb")!, flags: ["read", "notify"],
                        descriptors: [BluetoothUUID("00002902-0000-1000-8000-00805f9b34fb")!])
                ])
        ])
        expectEqual(try ServicesResult(json: result.json), result)
        let steps = try RunParams(
            json: json(
                #"{"address":"AA:BB:CC:DD:EE:FF","steps":[{"op":"readDescriptor","characteristic":"2a19","descriptor":"2902"},{"op":"writeDescriptor","characteristic":"2a19","descriptor":"2901","value":"aGk="}]}"#
            )
        ).steps
        expectEqual(steps.map(\.operation), [.readDescriptor, .writeDescriptor])
        expectEqual((steps[1].kind as? WriteDescriptorStep)?.value, Data("hi".utf8))
        expectEqual((steps[0].kind as? any CharacteristicStep)?.readingName, "2a19/2902")
        #expect(throws: RPCError.self) {
            try ChainStep(json: json(#"{"op":"readDescriptor","characteristic":"2a19"}"#), path: "steps[0]")
        }
    }

    @Test func stepResultsAndEventsCarryDecodedNumbers() throws {
        let read = StepResult(step: 1, operation: .read, value: Data([87]), number: 87, unit: "%")
        expectEqual(read.json, json(#"{"step":1,"op":"read","value":"Vw==","number":87.0,"unit":"%"}"#))
        let notify = StepResult(
            step: 2, operation: .notify, values: [Data([0, 72]), Data([9])], numbers: [72, nil], unit: "bpm")
        expectEqual(
            notify.json, json(#"{"step":2,"op":"notify","values":["AEg=","CQ=="],"numbers":[72.0,null],"unit":"bpm"}"#))
        expectEqual(try StepResult(json: notify.json), notify)
        let connect = StepResult(step: 0, operation: .connect, mtu: 247)
        expectEqual(try StepResult(json: connect.json), connect)
        let event = StepEvent(chain: "c-1", step: 1, operation: .read, value: Data([87]), number: 87, unit: "%")
        expectEqual(try StepEvent(json: event.json), event)
    }
}
