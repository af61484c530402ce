import Foundation
import TestSupport
import Testing

@testable import ContextBusWire

struct DeviceRecordedRunTests {
    @Test func aRecordedResultIsTheRunResultWithRecordedAndRecordError() throws {
        let saved = json(#"{"chain":"c-17","results":[{"step":0,"op":"connect"}],"recorded":true}"#)
        let result = try RecordedRunResult(json: saved)
        expectEqual(
            result,
            RecordedRunResult(
                run: RunResult(chain: "c-17", results: [StepResult(step: 0, operation: .connect)]),
                recording: RecordingOutcome(error: nil)))
        expectEqual(result.json, saved)

        let failed = json(#"{"chain":"c-18","results":[],"recorded":false,"recordError":"no store"}"#)
        expectEqual(try RecordedRunResult(json: failed).recording, RecordingOutcome(error: "no store"))
        try expectEqual(RecordedRunResult(json: failed).json, failed)
    }

    @Test func aChainThatDidNotAskToBeRecordedHasNoRecordingAndThePlainResult() throws {
        let plain = json(#"{"chain":"c-1","results":[]}"#)
        let result = try RecordedRunResult(json: plain)
        expectNil(result.recording)
        expectEqual(result.json, RunResult(chain: "c-1", results: []).json)
        expectEqual(DeviceRecordedRun.name, DeviceRun.name)
    }

    @Test func aFailedChainsDataGainsRecordedAndRecordError() {
        let failure = ChainFailure(chain: "c-2", step: 1, results: [])
        let error = RPCError.deviceError("boom", failure: failure).adding(RecordingOutcome(error: "no store"))
        expectEqual(
            error.data,
            json(#"{"chain":"c-2","step":1,"results":[],"recorded":false,"recordError":"no store"}"#))
        expectEqual(error.chainFailure, failure)
        expectEqual(RPCError.deviceError("boom", failure: failure).adding(nil).data, failure.json)
    }
}
