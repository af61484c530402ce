import ContextBusSupport

/// `{"op":"readDescriptor","characteristic":"2a19","descriptor":"2901"}`: reads a descriptor of a characteristic; its
/// result and its `device.step` event carry the value read, as a `read`'s do. A recording saves the value under
/// `"<characteristic>/<descriptor>"` (`2a19/2901`).
public struct ReadDescriptorStep: CharacteristicStep {
    public static let operation = StepOperation.readDescriptor

    public var characteristic: BluetoothUUID
    public var descriptor: BluetoothUUID
    public var timeoutMs: Int?

    public init(characteristic: BluetoothUUID, descriptor: BluetoothUUID, timeoutMs: Int?) {
        self.characteristic = characteristic
        self.descriptor = descriptor
        self.timeoutMs = timeoutMs
    }

    public init(fields: JSONFields, timeoutMs: Int?) throws(RPCError) {
        self.init(
            characteristic: try BluetoothUUID.read(fields, "characteristic"),
            descriptor: try BluetoothUUID.read(fields, "descriptor"), timeoutMs: timeoutMs)
    }

    public var members: [String: JSONValue] {
        ["characteristic": .string(characteristic.string), "descriptor": .string(descriptor.string)]
    }

    public var readingName: String { "\(characteristic.string)/\(descriptor.string)" }
}

extension ChainStep {
    /// `{"op":"readDescriptor","characteristic":…,"descriptor":…}`.
    public static func readDescriptor(
        characteristic: BluetoothUUID, descriptor: BluetoothUUID, timeoutMs: Int?
    ) -> ChainStep {
        ChainStep(ReadDescriptorStep(characteristic: characteristic, descriptor: descriptor, timeoutMs: timeoutMs))
    }
}
