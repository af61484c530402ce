import ContextBusSupport
public import Foundation

// `device.run`, `device.cancel`, the `device.step` event and the data of a failed chain
// (`docs/protocol.md`, "Device methods").

/// `device.run`: a chain of steps against one device.
public enum DeviceRun: RPCMethod {
    public typealias Params = RunParams
    public typealias Result = RunResult
    public static let name = "device.run"
}

/// `device.cancel` `{"chain":"c-17"}` → `{}`.
public enum DeviceCancel: RPCMethod {
    public typealias Params = ChainReference
    public typealias Result = EmptyObject
    public static let name = "device.cancel"
}

/// `{"address":"…","steps":[…],"timeoutMs":30000,"record":false,"adapter":"hci0"}`; `steps` must not be empty,
/// `timeoutMs` (the whole chain's) is optional, `record` defaults to false, `adapter` to the service's `--adapter`.
public struct RunParams: JSONConvertible, Hashable {
    public var address: BluetoothAddress
    public var steps: [ChainStep]
    public var timeoutMs: Int?
    /// Whether to save the device state and values read to the store service.
    public var record: Bool
    /// The adapter to use (`hci0`); `nil` for the service's.
    public var adapter: String?

    public init(
        address: BluetoothAddress, steps: [ChainStep], timeoutMs: Int? = nil, record: Bool = false,
        adapter: String? = nil
    ) {
        self.address = address
        self.steps = steps
        self.timeoutMs = timeoutMs
        self.record = record
        self.adapter = adapter
    }

    public init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        address = try BluetoothAddress.read(fields, "address")
        guard try !fields.array("steps").isEmpty else { throw fields.error("steps", "must not be empty") }
        steps = try fields.objects("steps") { (step) throws(RPCError) in try ChainStep(fields: step) }
        timeoutMs = try fields.optionalInt("timeoutMs", atLeast: 1)
        record = try fields.optionalBool("record") ?? false
        adapter = try readAdapter(fields)
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "address": .string(address.string), "steps": .array(steps.map(\.json)), "record": .bool(record),
        ]
        if let timeoutMs { members["timeoutMs"] = .int(Int64(timeoutMs)) }
        if let adapter { members["adapter"] = .string(adapter) }
        return .object(members)
    }
}

/// `{"chain":"c-17","results":[…]}`: one entry per step, in order.
public struct RunResult: JSONConvertible, Hashable {
    public var chain: String
    public var results: [StepResult]

    public init(chain: String, results: [StepResult]) {
        self.chain = chain
        self.results = results
    }

    public init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        chain = try fields.string("chain")
        results = try fields.objects("results") { (fields) throws(RPCError) in try StepResult(fields: fields) }
    }

    public var json: JSONValue { .object(["chain": .string(chain), "results": .array(results.map(\.json))]) }
}

/// `{"chain":"c-17"}`: the params of `device.cancel`.
public struct ChainReference: JSONConvertible, Hashable {
    public var chain: String

    public init(chain: String) {
        self.chain = chain
    }

    public init(json: JSONValue) throws(RPCError) {
        chain = try JSONFields(json).string("chain")
    }

    public var json: JSONValue { .object(["chain": .string(chain)]) }
}

/// The `device.step` event, sent as each step finishes:
/// `{"chain":"c-17","step":1,"op":"read","value":"<base64>","number":87.0,"unit":"%"}`.
///
/// `value` is present for `read` (and `readDescriptor`), and for each notification of a `notify` step (whose end is
/// one more event without `value`); `number` and `unit` when the value's format is known.
public struct StepEvent: RPCEventPayload, Hashable {
    public static let method = "device.step"

    public var chain: String
    public var step: Int
    public var operation: StepOperation
    public var value: Data?
    public var number: Double?
    public var unit: String?

    public init(
        chain: String, step: Int, operation: StepOperation, value: Data? = nil, number: Double? = nil,
        unit: String? = nil
    ) {
        self.chain = chain
        self.step = step
        self.operation = operation
        self.value = value
        self.number = number
        self.unit = unit
    }

    public init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        chain = try fields.string("chain")
        step = try fields.int("step")
        guard let operation = try fields.optionalEnum("op", cases: StepOperation.allCases) else {
            throw fields.error("op", "is required")
        }
        self.operation = operation
        value = try readBase64(fields, "value")
        number = try fields.optionalDouble("number")
        unit = try fields.optionalString("unit")
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "chain": .string(chain), "step": .int(Int64(step)), "op": .string(operation.rawValue),
        ]
        if let value { members["value"] = .string(value.base64EncodedString()) }
        if let number { members["number"] = .double(number) }
        if let unit { members["unit"] = .string(unit) }
        return .object(members)
    }
}

/// The `data` of a failed chain's `502`, `408` or `499`: `{"chain","step","bluez"?,"results"}`.
public struct ChainFailure: JSONConvertible, Hashable {
    public var chain: String
    /// The index of the step that failed.
    public var step: Int
    /// The D-Bus error name, when BlueZ gave one (`org.bluez.Error.Failed`).
    public var bluez: String?
    /// The entries of the steps that finished before the failure.
    public var results: [StepResult]

    public init(chain: String, step: Int, bluez: String? = nil, results: [StepResult]) {
        self.chain = chain
        self.step = step
        self.bluez = bluez
        self.results = results
    }

    public init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        chain = try fields.string("chain")
        step = try fields.int("step")
        bluez = try fields.optionalString("bluez")
        results = try fields.objects("results") { (fields) throws(RPCError) in try StepResult(fields: fields) }
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "chain": .string(chain), "step": .int(Int64(step)), "results": .array(results.map(\.json)),
        ]
        if let bluez { members["bluez"] = .string(bluez) }
        return .object(members)
    }
}

extension RPCError {
    /// 502: BlueZ or the link failed at `failure.step`.
    public static func deviceError(_ message: String, failure: ChainFailure) -> RPCError {
        .deviceError(message, data: failure.json)
    }

    /// 408: a step or the whole chain timed out at `failure.step`.
    public static func timeout(_ message: String, failure: ChainFailure) -> RPCError {
        .timeout(message, data: failure.json)
    }

    /// 499: the chain was cancelled at `failure.step`.
    public static func cancelled(_ message: String, failure: ChainFailure) -> RPCError {
        .cancelled(message, data: failure.json)
    }

    /// The chain failure in `data`, for `502`, `408` and `499` answers to `device.run`.
    public var chainFailure: ChainFailure? {
        guard let data else { return nil }
        return try? ChainFailure(json: data)
    }
}

/// Reads the optional member `adapter`: one object path element (`hci0`), as BlueZ names adapters.
func readAdapter(_ fields: JSONFields) throws(RPCError) -> String? {
    guard let adapter = try fields.optionalString("adapter") else { return nil }
    let isElement =
        !adapter.isEmpty
        && adapter.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x5F
        }
    guard isElement else { throw fields.error("adapter", "expected an adapter name such as \"hci0\"") }
    return adapter
}
