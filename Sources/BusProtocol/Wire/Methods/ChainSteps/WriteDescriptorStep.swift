import ContextBusSupport
public import Foundation

/// `{"op":"writeDescriptor","characteristic":"…","descriptor":"2901","value":"<base64>"}`: writes a descriptor of a
/// characteristic (BlueZ refuses the Client Characteristic Configuration `2902`, which only notify sessions write).
public struct WriteDescriptorStep: CharacteristicStep {
    public static let operation = StepOperation.writeDescriptor

    public var characteristic: BluetoothUUID
    public var descriptor: BluetoothUUID
    public var value: Data
    public var timeoutMs: Int?

    public init(characteristic: BluetoothUUID, descriptor: BluetoothUUID, value: Data, timeoutMs: Int?) {
        self.characteristic = characteristic
        self.descriptor = descriptor
        self.value = value
        self.timeoutMs = timeoutMs
    }

    public init(fields: JSONFields, timeoutMs: Int?) throws(RPCError) {
        let characteristic = try BluetoothUUID.read(fields, "characteristic")
        let descriptor = try BluetoothUUID.read(fields, "descriptor")
        guard let value = Data(base64Encoded: try fields.string("value")) else {
            throw fields.error("value", "expected base64")
        }
        self.init(characteristic: characteristic, descriptor: descriptor, value: value, timeoutMs: timeoutMs)
    }

    public var members: [String: JSONValue] {
        [
            "characteristic": .string(characteristic.string), "descriptor": .string(descriptor.string),
            "value": .string(value.base64EncodedString()),
        ]
    }

    public var readingName: String { "\(characteristic.string)/\(descriptor.string)" }
}

extension ChainStep {
    /// `{"op":"writeDescriptor","characteristic":…,"descriptor":…,"value":…}`.
    public static func writeDescriptor(
        characteristic: BluetoothUUID, descriptor: BluetoothUUID, value: Data, timeoutMs: Int?
    ) -> ChainStep {
        ChainStep(
            WriteDescriptorStep(
                characteristic: characteristic, descriptor: descriptor, value: value, timeoutMs: timeoutMs))
    }
}
