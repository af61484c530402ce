import ContextBusSupport

/// One step of a `device.run` chain: a value of one of the kinds of step.
///
/// ```
/// {"op":"connect","timeoutMs":10000}
/// {"op":"read","characteristic":"2a19"}
/// {"op":"write","characteristic":"…","value":"<base64>","response":true}
/// {"op":"notify","characteristic":"2a37","count":3,"timeoutMs":5000}
/// {"op":"wait","ms":100}
/// {"op":"disconnect"}
/// {"op":"readDescriptor","characteristic":"2a19","descriptor":"2901"}
/// {"op":"writeDescriptor","characteristic":"…","descriptor":"2901","value":"<base64>"}
/// ```
///
/// `timeoutMs` is optional everywhere (the service's default applies). Each kind is a `StepKind` in a file of its own
/// (`ConnectStep.swift`, …), which also declares its factory here (`.read(characteristic:timeoutMs:)`).
public struct ChainStep: Sendable, Hashable {
    /// The step as a value of its kind (`ReadStep`, …).
    public let kind: any StepKind

    public init(_ kind: some StepKind) {
        self.kind = kind
    }

    /// Every kind of step, in the order of `StepOperation`: the types `init(json:path:)` reads.
    public static let kinds: [any StepKind.Type] = [
        ConnectStep.self, ReadStep.self, WriteStep.self, NotifyStep.self, WaitStep.self, DisconnectStep.self,
        ReadDescriptorStep.self, WriteDescriptorStep.self,
    ]

    /// The kind whose `op` is `operation`.
    public static func kind(of operation: StepOperation) -> any StepKind.Type {
        guard let kind = kinds.first(where: { $0.operation == operation }) else {
            fatalError("ChainStep.kinds has no step kind for op '\(operation.rawValue)'")
        }
        return kind
    }

    public var operation: StepOperation { type(of: kind).operation }

    /// The step's own `timeoutMs`, when it names one (`wait` and `disconnect` steps have none on the wire).
    public var timeoutMs: Int? { kind.timeoutMs }

    /// The characteristic the step uses, if it uses one.
    public var characteristic: BluetoothUUID? { (kind as? any CharacteristicStep)?.characteristic }

    /// Reads a step at `path` (`steps[2]`), naming the offending field in errors (`steps[2].characteristic`).
    public init(json: JSONValue, path: String) throws(RPCError) {
        try self.init(fields: JSONFields(json, path: path))
    }

    init(fields: JSONFields) throws(RPCError) {
        guard let operation = try fields.optionalEnum("op", cases: StepOperation.allCases) else {
            throw fields.error("op", "is required")
        }
        let timeoutMs = try fields.optionalInt("timeoutMs", atLeast: 1)
        kind = try Self.kind(of: operation).init(fields: fields, timeoutMs: timeoutMs)
    }

    public var json: JSONValue {
        var members = kind.members
        members["op"] = .string(operation.rawValue)
        if let timeoutMs { members["timeoutMs"] = .int(Int64(timeoutMs)) }
        return .object(members)
    }

    public static func == (lhs: ChainStep, rhs: ChainStep) -> Bool {
        lhs.kind.isEqual(to: rhs.kind)
    }

    public func hash(into hasher: inout Hasher) {
        kind.hash(into: &hasher)
    }
}

extension StepKind {
    /// Whether `other` is a step of the same kind with the same members.
    fileprivate func isEqual(to other: any StepKind) -> Bool {
        (other as? Self) == self
    }
}
