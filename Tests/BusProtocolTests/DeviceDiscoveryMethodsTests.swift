import TestSupport
import Testing

@testable import ContextBusWire

struct DeviceDiscoveryMethodsTests {
    @Test func adaptersResultMatchesTheProtocol() throws {
        let example = json(#"{"adapters":[{"name":"hci0","address":"00:1A:7D:DA:71:13","powered":true}]}"#)
        let result = try AdaptersResult(json: example)
        expectEqual(
            result.adapters,
            [
                AdapterInfo(name: "hci0", address: BluetoothAddress("00:1A:7D:DA:71:13")!, powered: true)
            ])
        expectEqual(result.json, example)
        expectEqual(
            invalidField { () throws(RPCError) in
                _ = try AdaptersResult(json: json(#"{"adapters":[{"name":"hci0","address":"00:1A:7D:DA:71:13"}]}"#))
            }, "adapters[0].powered")
    }

    @Test func listParamsTakeAnOptionalAdapter() throws {
        expectEqual(try ListParams(json: json(#"{"adapter":"hci1"}"#)).adapter, "hci1")
        expectNil(try ListParams(json: json("{}")).adapter)
        expectEqual(ListParams(adapter: "hci1").json, json(#"{"adapter":"hci1"}"#))
    }

    @Test func scanParamsMatchTheProtocolExample() throws {
        let example = json(#"{"seconds":5,"uuids":["180d"],"rssi":-80}"#)
        let params = try ScanParams(json: example)
        expectEqual(params.seconds, 5)
        expectEqual(params.uuids, [BluetoothUUID("180d")!])
        expectEqual(params.rssi, -80)
        expectEqual(params.json, example)
        expectEqual(try ScanParams(json: json(#"{"seconds":0.5}"#)).json, json(#"{"seconds":0.5}"#))
        expectEqual(invalidField { () throws(RPCError) in _ = try ScanParams(json: json(#"{}"#)) }, "seconds")
        expectEqual(
            invalidField { () throws(RPCError) in _ = try ScanParams(json: json(#"{"seconds":0}"#)) }, "seconds")
        expectEqual(
            invalidField { () throws(RPCError) in _ = try ScanParams(json: json(#"{"seconds":1,"uuids":["180d","x"]}"#))
            }, "uuids[1]")
    }

    @Test func devicesResultMatchesTheProtocolFieldForField() throws {
        let example = json(
            #"{"devices":[{"address":"AA:BB:CC:DD:EE:FF","name":"Polar H10","rssi":-60,"connected":false,"paired":true,"services":["180d","0000180f-0000-1000-8000-00805f9b34fb"]},{"address":"11:22:33:44:55:66","name":null,"connected":true,"paired":false,"services":[]}]}"#
        )
        let result = try DevicesResult(json: example)
        expectEqual(result.devices.count, 2)
        expectEqual(result.devices[0].name, "Polar H10")
        expectEqual(result.devices[0].rssi, -60)
        expectEqual(result.devices[0].services.map(\.string), ["180d", "0000180f-0000-1000-8000-00805f9b34fb"])
        expectNil(result.devices[1].name)
        expectNil(result.devices[1].rssi)
        expectEqual(result.json, example)
    }
}
