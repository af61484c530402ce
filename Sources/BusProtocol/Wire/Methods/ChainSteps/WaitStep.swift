import ContextBusSupport

/// `{"op":"wait","ms":100}`: waits `ms` milliseconds (at least 0). It takes no `timeoutMs`: a wait is as long as it
/// says.
public struct WaitStep: StepKind {
    public static let operation = StepOperation.wait

    public var ms: Int

    public init(ms: Int) {
        self.ms = ms
    }

    public init(fields: JSONFields, timeoutMs: Int?) throws(RPCError) {
        guard let ms = try fields.optionalInt("ms", atLeast: 0) else { throw fields.error("ms", "is required") }
        self.init(ms: ms)
    }

    public var members: [String: JSONValue] { ["ms": .int(Int64(ms))] }
}

extension ChainStep {
    /// `{"op":"wait","ms":…}`.
    public static func wait(ms: Int) -> ChainStep {
        ChainStep(WaitStep(ms: ms))
    }
}
