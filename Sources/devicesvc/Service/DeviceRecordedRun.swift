import ContextBusSupport
import ContextBusWire

/// `device.run` as `devicesvc` answers it: docs/protocol.md's result, plus `recorded` (and `recordError`) for
/// chains with `record: true` (an addition to the protocol, documented in docs/device-service.md).
enum DeviceRecordedRun: RPCMethod {
    typealias Params = RunParams
    typealias Result = RecordedRunResult
    static let name = DeviceRun.name
}

/// Whether a `record: true` chain's values reached the store.
struct RecordingOutcome: Sendable, Hashable {
    /// Why the recording failed; `nil` when it was saved.
    var error: String?

    /// `{"recorded": true}` or `{"recorded": false, "recordError": "…"}`.
    var members: [String: JSONValue] {
        guard let error else { return ["recorded": .bool(true)] }
        return ["recorded": .bool(false), "recordError": .string(error)]
    }
}

/// `{"chain","results":[…]}`, with `recorded`/`recordError` when the chain asked to be recorded.
struct RecordedRunResult: JSONConvertible, Hashable {
    var run: RunResult
    /// `nil` when the chain did not ask to be recorded.
    var recording: RecordingOutcome?

    init(run: RunResult, recording: RecordingOutcome?) {
        self.run = run
        self.recording = recording
    }

    init(json: JSONValue) throws(RPCError) {
        run = try RunResult(json: json)
        switch json["recorded"] {
        case .bool(true)?: recording = RecordingOutcome(error: nil)
        case .bool(false)?: recording = RecordingOutcome(error: json["recordError"]?.stringValue ?? "")
        default: recording = nil
        }
    }

    var json: JSONValue {
        guard case .object(var members) = run.json else { return run.json }
        for (key, value) in recording?.members ?? [:] { members[key] = value }
        return .object(members)
    }
}

extension RPCError {
    /// The error with `recorded`/`recordError` added to its `data` (when the chain asked to be recorded).
    func adding(_ recording: RecordingOutcome?) -> RPCError {
        guard let recording else { return self }
        var members: [String: JSONValue] = [:]
        if case .object(let existing)? = data { members = existing }
        for (key, value) in recording.members { members[key] = value }
        return RPCError(code: code, message: message, data: .object(members))
    }
}
