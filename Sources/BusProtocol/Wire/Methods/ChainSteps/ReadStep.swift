import ContextBusSupport

/// `{"op":"read","characteristic":"2a19"}`: reads a characteristic; its result and its `device.step` event carry the
/// value read.
public struct ReadStep: CharacteristicStep {
    public static let operation = StepOperation.read

    public var characteristic: BluetoothUUID
    public var timeoutMs: Int?

    public init(characteristic: BluetoothUUID, timeoutMs: Int?) {
        self.characteristic = characteristic
        self.timeoutMs = timeoutMs
    }

    public init(fields: JSONFields, timeoutMs: Int?) throws(RPCError) {
        self.init(characteristic: try BluetoothUUID.read(fields, "characteristic"), timeoutMs: timeoutMs)
    }

    public var members: [String: JSONValue] { ["characteristic": .string(characteristic.string)] }
}

extension ChainStep {
    /// `{"op":"read","characteristic":…}`.
    public static func read(characteristic: BluetoothUUID, timeoutMs: Int?) -> ChainStep {
        ChainStep(ReadStep(characteristic: characteristic, timeoutMs: timeoutMs))
    }
}
