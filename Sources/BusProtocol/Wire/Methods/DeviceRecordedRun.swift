import ContextBusSupport

// `device.run` as `devicesvc` answers it: PROTOCOL.md's result plus what became of a `record: true` chain's recording
// (an addition to the protocol, docs/device-service.md "Recording"). devicesvc encodes it, ctxbus decodes it.

/// `device.run` with the recording outcome in its result: the same method and params as `DeviceRun`.
public enum DeviceRecordedRun: RPCMethod {
    public typealias Params = RunParams
    public typealias Result = RecordedRunResult
    public static let name = DeviceRun.name
}

/// Whether a `record: true` chain's values reached the store.
public struct RecordingOutcome: Sendable, Hashable {
    /// Why the recording failed; `nil` when it was saved.
    public var error: String?

    public init(error: String?) {
        self.error = error
    }

    /// Reads `recorded` and `recordError` beside a chain's result; `nil` when `recorded` is absent (the chain did
    /// not ask to be recorded).
    init?(fields: JSONFields) throws(RPCError) {
        guard let recorded = try fields.optionalBool("recorded") else { return nil }
        let error = try fields.optionalString("recordError")
        self.init(error: recorded ? nil : error ?? "")
    }

    /// `{"recorded": true}` or `{"recorded": false, "recordError": "…"}`.
    public var members: [String: JSONValue] {
        guard let error else { return ["recorded": .bool(true)] }
        return ["recorded": .bool(false), "recordError": .string(error)]
    }
}

/// `{"chain","results":[…]}`, with `recorded` (and `recordError`) when the chain asked to be recorded:
///
/// ```json
/// {"chain":"c-17","results":[…],"recorded":true}
/// {"chain":"c-18","results":[…],"recorded":false,"recordError":"no service is listening at /run/ctxbus/store.sock"}
/// ```
public struct RecordedRunResult: JSONConvertible, Hashable {
    public var run: RunResult
    /// `nil` when the chain did not ask to be recorded.
    public var recording: RecordingOutcome?

    public init(run: RunResult, recording: RecordingOutcome?) {
        self.run = run
        self.recording = recording
    }

    public init(json: JSONValue) throws(RPCError) {
        run = try RunResult(json: json)
        recording = try RecordingOutcome(fields: JSONFields(json))
    }

    public var json: JSONValue {
        guard case .object(var members) = run.json else { return run.json }
        for (key, value) in recording?.members ?? [:] { members[key] = value }
        return .object(members)
    }
}

extension RPCError {
    /// The error with `recorded`/`recordError` added to its `data` (when the chain asked to be recorded).
    public func adding(_ recording: RecordingOutcome?) -> RPCError {
        guard let recording else { return self }
        var members: [String: JSONValue] = [:]
        if case .object(let existing)? = data { members = existing }
        for (key, value) in recording.members { members[key] = value }
        return RPCError(code: code, message: message, data: .object(members))
    }
}
