import ContextBusSupport

/// What a `device.run` step does (`op` on the wire): one case per kind of step.
public enum StepOperation: String, Sendable, Hashable, CaseIterable {
    case connect, read, write, notify, wait, disconnect, readDescriptor, writeDescriptor
}

/// One kind of `device.run` step: a type per kind (`ConnectStep`, `ReadStep`, …), each in a file of its own that
/// holds everything the protocol says about it — its members, how they are read and checked, how they are written.
///
/// A `ChainStep` is a value of one of these types, and `ChainStep.kinds` lists them. The layers above add their own
/// facets to the same types, again one file per kind: devicesvc how a kind runs and what it reports
/// (`RunnableStep`, `Sources/devicesvc/Chains/Steps/`), ctxbus how it is spelled in the compact chain syntax
/// (`ChainSyntaxStep`, `Sources/ctxbus/Input/Steps/`). Nothing else switches over the kinds of step.
public protocol StepKind: Sendable, Hashable {
    /// The kind's `op`.
    static var operation: StepOperation { get }

    /// Reads a step of this kind from its object, whose `op` and `timeoutMs` were read already.
    ///
    /// - Parameters:
    ///   - fields: The step's object.
    ///   - timeoutMs: Its `timeoutMs` (checked to be at least 1), for the kinds that take one; the others ignore it.
    /// - Throws: `RPCError.invalidParams` naming the member at fault (`steps[2].characteristic`).
    init(fields: JSONFields, timeoutMs: Int?) throws(RPCError)

    /// The step's members besides `op` and `timeoutMs`.
    var members: [String: JSONValue] { get }

    /// The step's own `timeoutMs`, when it names one.
    var timeoutMs: Int? { get }
}

extension StepKind {
    public var members: [String: JSONValue] { [:] }
    public var timeoutMs: Int? { nil }
}

/// A kind of step that works on one characteristic of the device: `read`, `write`, `notify`, and the descriptor
/// steps.
public protocol CharacteristicStep: StepKind {
    /// The characteristic, as the chain named it (`2a19`).
    var characteristic: BluetoothUUID { get }

    /// What a value the step reads is recorded under (`Reading.characteristic`): the characteristic as the chain named
    /// it (`2a19`), or for a descriptor step `2a19/2901`.
    var readingName: String { get }
}

extension CharacteristicStep {
    public var readingName: String { characteristic.string }
}
