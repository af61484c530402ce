import ContextBusSupport
public import Foundation

/// `{"op":"write","characteristic":"…","value":"<base64>","response":true}`: writes `value` to a characteristic, as
/// a write request (answered) or, with `"response": false`, a write command (unanswered). `response` defaults to
/// true.
public struct WriteStep: CharacteristicStep {
    public static let operation = StepOperation.write

    public var characteristic: BluetoothUUID
    public var value: Data
    /// Whether the device answers the write (a write request), or not (a write command).
    public var response: Bool
    public var timeoutMs: Int?

    public init(characteristic: BluetoothUUID, value: Data, response: Bool, timeoutMs: Int?) {
        self.characteristic = characteristic
        self.value = value
        self.response = response
        self.timeoutMs = timeoutMs
    }

    public init(fields: JSONFields, timeoutMs: Int?) throws(RPCError) {
        let characteristic = try BluetoothUUID.read(fields, "characteristic")
        guard let value = Data(base64Encoded: try fields.string("value")) else {
            throw fields.error("value", "expected base64")
        }
        self.init(
            characteristic: characteristic, value: value, response: try fields.optionalBool("response") ?? true,
            timeoutMs: timeoutMs)
    }

    public var members: [String: JSONValue] {
        [
            "characteristic": .string(characteristic.string), "value": .string(value.base64EncodedString()),
            "response": .bool(response),
        ]
    }
}

extension ChainStep {
    /// `{"op":"write","characteristic":…,"value":…,"response":…}`.
    public static func write(
        characteristic: BluetoothUUID, value: Data, response: Bool, timeoutMs: Int?
    ) -> ChainStep {
        ChainStep(WriteStep(characteristic: characteristic, value: value, response: response, timeoutMs: timeoutMs))
    }
}
