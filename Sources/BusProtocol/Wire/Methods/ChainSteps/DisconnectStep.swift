import ContextBusSupport

/// `{"op":"disconnect"}`: disconnects from the device. It takes no `timeoutMs` (the service's step timeout applies).
public struct DisconnectStep: StepKind {
    public static let operation = StepOperation.disconnect

    public init() {}

    public init(fields: JSONFields, timeoutMs: Int?) throws(RPCError) {
        self.init()
    }
}

extension ChainStep {
    /// `{"op":"disconnect"}`.
    public static let disconnect = ChainStep(DisconnectStep())
}
