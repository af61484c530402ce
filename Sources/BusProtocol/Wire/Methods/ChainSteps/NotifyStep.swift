import ContextBusSupport

/// `{"op":"notify","characteristic":"2a37","count":3,"timeoutMs":5000}`: collects `count` notifications (at least 1)
/// of a characteristic.
///
/// Each notification is a `device.step` event with its value as it arrives; the step's end is one more event, without
/// a value, and its result carries every value (`values`).
public struct NotifyStep: CharacteristicStep {
    public static let operation = StepOperation.notify

    public var characteristic: BluetoothUUID
    /// How many notifications to collect.
    public var count: Int
    public var timeoutMs: Int?

    public init(characteristic: BluetoothUUID, count: Int, timeoutMs: Int?) {
        self.characteristic = characteristic
        self.count = count
        self.timeoutMs = timeoutMs
    }

    public init(fields: JSONFields, timeoutMs: Int?) throws(RPCError) {
        let characteristic = try BluetoothUUID.read(fields, "characteristic")
        guard let count = try fields.optionalInt("count", atLeast: 1) else {
            throw fields.error("count", "is required")
        }
        self.init(characteristic: characteristic, count: count, timeoutMs: timeoutMs)
    }

    public var members: [String: JSONValue] {
        ["characteristic": .string(characteristic.string), "count": .int(Int64(count))]
    }
}

extension ChainStep {
    /// `{"op":"notify","characteristic":…,"count":…}`.
    public static func notify(characteristic: BluetoothUUID, count: Int, timeoutMs: Int?) -> ChainStep {
        ChainStep(NotifyStep(characteristic: characteristic, count: count, timeoutMs: timeoutMs))
    }
}

extension StepEvent {
    /// Whether the event is one notification of a notify step rather than the end of a step: a notify step's events
    /// are its notifications, each with a value, then its end without one.
    public var isNotification: Bool { operation == NotifyStep.operation && value != nil }
}
