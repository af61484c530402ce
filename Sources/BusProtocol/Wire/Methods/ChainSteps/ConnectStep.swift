import ContextBusSupport

/// `{"op":"connect","timeoutMs":10000}`: connects to the device, and waits until its services are resolved.
public struct ConnectStep: StepKind {
    public static let operation = StepOperation.connect

    public var timeoutMs: Int?

    public init(timeoutMs: Int?) {
        self.timeoutMs = timeoutMs
    }

    public init(fields: JSONFields, timeoutMs: Int?) throws(RPCError) {
        self.init(timeoutMs: timeoutMs)
    }
}

extension ChainStep {
    /// `{"op":"connect"}`.
    public static func connect(timeoutMs: Int?) -> ChainStep {
        ChainStep(ConnectStep(timeoutMs: timeoutMs))
    }
}
