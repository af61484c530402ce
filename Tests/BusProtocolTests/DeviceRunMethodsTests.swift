import Foundation
import TestSupport
import Testing

@testable import ContextBusWire

struct DeviceRunMethodsTests {
    private let example = json(
        #"""
        {"address":"AA:BB:CC:DD:EE:FF","steps":[
           {"op":"connect","timeoutMs":10000},
           {"op":"read","characteristic":"2a19"},
           {"op":"write","characteristic":"00002a39-0000-1000-8000-00805f9b34fb","value":"AQI=","response":true},
           {"op":"notify","characteristic":"2a37","count":3,"timeoutMs":5000},
           {"op":"wait","ms":100},
           {"op":"disconnect"}],
         "timeoutMs":30000,"record":false}
        """#)

    @Test func runParamsMatchTheProtocolExampleFieldForField() throws {
        let params = try RunParams(json: example)
        expectEqual(params.address.string, "AA:BB:CC:DD:EE:FF")
        expectEqual(
            params.steps,
            [
                .connect(timeoutMs: 10000), .read(characteristic: BluetoothUUID("2a19")!, timeoutMs: nil),
                .write(
                    characteristic: BluetoothUUID("00002a39-0000-1000-8000-00805f9b34fb")!, value: Data([1, 2]),
                    response: true, timeoutMs: nil),
                .notify(characteristic: BluetoothUUID("2a37")!, count: 3, timeoutMs: 5000), .wait(ms: 100), .disconnect,
            ])
        expectEqual(params.steps.map(\.operation), [.connect, .read, .write, .notify, .wait, .disconnect])
        expectEqual(params.timeoutMs, 30000)
        expectEqual(params.record, false)
        expectEqual(params.json, example)
    }

    @Test func runDefaultsResponseToTrueAndRecordToFalse() throws {
        let params = try RunParams(
            json: json(#"{"address":"aa:bb:cc:dd:ee:ff","steps":[{"op":"write","characteristic":"2a39","value":""}]}"#))
        expectEqual(
            params.steps,
            [
                .write(characteristic: BluetoothUUID("2a39")!, value: Data(), response: true, timeoutMs: nil)
            ])
        expectEqual(params.record, false)
        expectEqual(params.address.string, "AA:BB:CC:DD:EE:FF")
    }

    @Test(arguments: [
        (#"{"steps":[{"op":"disconnect"}]}"#, "address"),
        (#"{"address":"AA:BB:CC","steps":[{"op":"disconnect"}]}"#, "address"),
        (#"{"address":"AA:BB:CC:DD:EE:FF","steps":[]}"#, "steps"),
        (#"{"address":"AA:BB:CC:DD:EE:FF"}"#, "steps"),
        (#"{"address":"AA:BB:CC:DD:EE:FF","steps":[{"op":"connect"},{"op":"jump"}]}"#, "steps[1].op"),
        (#"{"address":"AA:BB:CC:DD:EE:FF","steps":[{"op":"connect"},{}]}"#, "steps[1].op"),
        (
            #"{"address":"AA:BB:CC:DD:EE:FF","steps":[{"op":"connect"},{"op":"read","characteristic":"2a19"},{"op":"read","characteristic":"battery"}]}"#,
            "steps[2].characteristic"
        ),
        (#"{"address":"AA:BB:CC:DD:EE:FF","steps":[{"op":"read"}]}"#, "steps[0].characteristic"),
        (
            #"{"address":"AA:BB:CC:DD:EE:FF","steps":[{"op":"write","characteristic":"2a39","value":"%%"}]}"#,
            "steps[0].value"
        ),
        (#"{"address":"AA:BB:CC:DD:EE:FF","steps":[{"op":"write","characteristic":"2a39"}]}"#, "steps[0].value"),
        (
            #"{"address":"AA:BB:CC:DD:EE:FF","steps":[{"op":"notify","characteristic":"2a37","count":0}]}"#,
            "steps[0].count"
        ),
        (#"{"address":"AA:BB:CC:DD:EE:FF","steps":[{"op":"notify","characteristic":"2a37"}]}"#, "steps[0].count"),
        (#"{"address":"AA:BB:CC:DD:EE:FF","steps":[{"op":"wait"}]}"#, "steps[0].ms"),
        (#"{"address":"AA:BB:CC:DD:EE:FF","steps":[{"op":"connect","timeoutMs":0}]}"#, "steps[0].timeoutMs"),
        (#"{"address":"AA:BB:CC:DD:EE:FF","steps":[7]}"#, "steps[0]"),
        (#"{"address":"AA:BB:CC:DD:EE:FF","steps":[{"op":"connect"}],"timeoutMs":-1}"#, "timeoutMs"),
        (#"{"address":"AA:BB:CC:DD:EE:FF","steps":[{"op":"connect"}],"record":"yes"}"#, "record"),
    ])
    func runNamesTheFieldThatIsWrong(text: String, field: String) {
        expectEqual(invalidField { () throws(RPCError) in _ = try RunParams(json: json(text)) }, field)
    }

    @Test func runResultMatchesTheProtocolExample() throws {
        let example = json(
            #"{"chain":"c-17","results":[{"step":0,"op":"connect"},{"step":1,"op":"read","value":"ZA=="},{"step":3,"op":"notify","values":["AQ==","Ag==","Aw=="]}]}"#
        )
        let result = try RunResult(json: example)
        expectEqual(result.chain, "c-17")
        expectEqual(
            result.results,
            [
                StepResult(step: 0, operation: .connect), StepResult(step: 1, operation: .read, value: Data([100])),
                StepResult(step: 3, operation: .notify, values: [Data([1]), Data([2]), Data([3])]),
            ])
        expectEqual(result.json, example)
    }

    @Test func stepEventMatchesTheProtocolExample() throws {
        let example = json(#"{"chain":"c-17","step":1,"op":"read","value":"ZA=="}"#)
        let event = try StepEvent(json: example)
        expectEqual(event, StepEvent(chain: "c-17", step: 1, operation: .read, value: Data([100])))
        expectEqual(event.json, example)
        expectEqual(RPCEvent(event).method, "device.step")
        let end = json(#"{"chain":"c-17","step":3,"op":"notify"}"#)
        expectNil(try StepEvent(json: end).value)
        try expectEqual(StepEvent(json: end).json, end)
    }

    @Test func failedChainsCarryChainStepBluezAndResultsInData() throws {
        let failure = ChainFailure(
            chain: "c-17", step: 2, bluez: "org.bluez.Error.Failed", results: [StepResult(step: 0, operation: .connect)]
        )
        let error = RPCError.deviceError("the write failed", failure: failure)
        expectEqual(error.code, .deviceError)
        expectEqual(
            error.data,
            json(
                #"{"chain":"c-17","step":2,"bluez":"org.bluez.Error.Failed","results":[{"step":0,"op":"connect"}]}"#
            ))
        expectEqual(error.chainFailure, failure)
        let timeout = RPCError.timeout("step 1 timed out", failure: ChainFailure(chain: "c-1", step: 1, results: []))
        expectEqual(timeout.code, .timeout)
        expectEqual(timeout.data, json(#"{"chain":"c-1","step":1,"results":[]}"#))
        expectEqual(RPCError.cancelled("cancelled", failure: failure).code, .cancelled)
    }

    @Test func cancelTakesTheChainID() throws {
        expectEqual(try ChainReference(json: json(#"{"chain":"c-17"}"#)).chain, "c-17")
        expectEqual(ChainReference(chain: "c-17").json, json(#"{"chain":"c-17"}"#))
        expectEqual(invalidField { () throws(RPCError) in _ = try ChainReference(json: json("{}")) }, "chain")
        expectEqual(DeviceCancel.name, "device.cancel")
    }
}
