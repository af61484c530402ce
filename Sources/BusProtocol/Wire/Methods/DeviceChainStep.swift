import ContextBusSupport
public import Foundation

/// What a `device.run` step does (`op` on the wire).
public enum StepOperation: String, Sendable, Hashable, CaseIterable {
    case connect, read, write, notify, wait, disconnect
}

/// One step of a `device.run` chain.
///
/// ```
/// {"op":"connect","timeoutMs":10000}
/// {"op":"read","characteristic":"2a19"}
/// {"op":"write","characteristic":"…","value":"<base64>","response":true}
/// {"op":"notify","characteristic":"2a37","count":3,"timeoutMs":5000}
/// {"op":"wait","ms":100}
/// {"op":"disconnect"}
/// ```
///
/// `timeoutMs` is optional everywhere (the service's default applies); `response` defaults to
/// true (a write with response); `count` is the number of notifications to collect (at least 1).
public enum ChainStep: Sendable, Hashable {
    case connect(timeoutMs: Int?)
    case read(characteristic: BluetoothUUID, timeoutMs: Int?)
    case write(characteristic: BluetoothUUID, value: Data, response: Bool, timeoutMs: Int?)
    case notify(characteristic: BluetoothUUID, count: Int, timeoutMs: Int?)
    case wait(ms: Int)
    case disconnect

    public var operation: StepOperation {
        switch self {
        case .connect: return .connect
        case .read: return .read
        case .write: return .write
        case .notify: return .notify
        case .wait: return .wait
        case .disconnect: return .disconnect
        }
    }

    /// The characteristic the step uses, if it uses one.
    public var characteristic: BluetoothUUID? {
        switch self {
        case .read(let c, _), .write(let c, _, _, _), .notify(let c, _, _): return c
        case .connect, .wait, .disconnect: return nil
        }
    }

    /// Reads a step at `path` (`steps[2]`), naming the offending field in errors (`steps[2].characteristic`).
    public init(json: JSONValue, path: String) throws(RPCError) {
        try self.init(fields: JSONFields(json, path: path))
    }

    init(fields: JSONFields) throws(RPCError) {
        guard let operation = try fields.optionalEnum("op", cases: StepOperation.allCases) else {
            throw fields.error("op", "is required")
        }
        let timeoutMs = try fields.optionalInt("timeoutMs", atLeast: 1)
        switch operation {
        case .connect:
            self = .connect(timeoutMs: timeoutMs)
        case .read:
            self = .read(characteristic: try BluetoothUUID.read(fields, "characteristic"), timeoutMs: timeoutMs)
        case .write:
            let characteristic = try BluetoothUUID.read(fields, "characteristic")
            guard let value = Data(base64Encoded: try fields.string("value")) else {
                throw fields.error("value", "expected base64")
            }
            self = .write(
                characteristic: characteristic, value: value, response: try fields.optionalBool("response") ?? true,
                timeoutMs: timeoutMs)
        case .notify:
            let characteristic = try BluetoothUUID.read(fields, "characteristic")
            guard let count = try fields.optionalInt("count", atLeast: 1) else {
                throw fields.error("count", "is required")
            }
            self = .notify(characteristic: characteristic, count: count, timeoutMs: timeoutMs)
        case .wait:
            guard let ms = try fields.optionalInt("ms", atLeast: 0) else { throw fields.error("ms", "is required") }
            self = .wait(ms: ms)
        case .disconnect:
            self = .disconnect
        }
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = ["op": .string(operation.rawValue)]
        var timeout: Int?
        switch self {
        case .connect(let t):
            timeout = t
        case .read(let c, let t):
            members["characteristic"] = .string(c.string)
            timeout = t
        case .write(let c, let value, let response, let t):
            members["characteristic"] = .string(c.string)
            members["value"] = .string(value.base64EncodedString())
            members["response"] = .bool(response)
            timeout = t
        case .notify(let c, let count, let t):
            members["characteristic"] = .string(c.string)
            members["count"] = .int(Int64(count))
            timeout = t
        case .wait(let ms):
            members["ms"] = .int(Int64(ms))
        case .disconnect:
            break
        }
        if let timeout { members["timeoutMs"] = .int(Int64(timeout)) }
        return .object(members)
    }
}

/// What one finished step produced: `{"step":0,"op":"connect"}`, `{"step":1,"op":"read","value":"…"}`,
/// `{"step":3,"op":"notify","values":["…","…"]}`.
public struct StepResult: JSONConvertible, Hashable {
    /// The 0-based index of the step in `steps`.
    public var step: Int
    public var operation: StepOperation
    /// The bytes read, for `read`.
    public var value: Data?
    /// The notifications received, for `notify`.
    public var values: [Data]?

    public init(step: Int, operation: StepOperation, value: Data? = nil, values: [Data]? = nil) {
        self.step = step
        self.operation = operation
        self.value = value
        self.values = values
    }

    public init(json: JSONValue) throws(RPCError) {
        try self.init(fields: JSONFields(json))
    }

    init(fields: JSONFields) throws(RPCError) {
        step = try fields.int("step")
        guard let operation = try fields.optionalEnum("op", cases: StepOperation.allCases) else {
            throw fields.error("op", "is required")
        }
        self.operation = operation
        value = try readBase64(fields, "value")
        if fields.value("values") != nil {
            values = try fields.elements("values") { (item, i) throws(RPCError) in
                guard case .string(let text) = item, let data = Data(base64Encoded: text) else {
                    throw .invalidParams(field: fields.path(of: "values", index: i), message: "expected base64")
                }
                return data
            }
        }
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = ["step": .int(Int64(step)), "op": .string(operation.rawValue)]
        if let value { members["value"] = .string(value.base64EncodedString()) }
        if let values { members["values"] = .array(values.map { .string($0.base64EncodedString()) }) }
        return .object(members)
    }
}

/// Reads an optional base64 member as bytes.
func readBase64(_ fields: JSONFields, _ key: String) throws(RPCError) -> Data? {
    guard let text = try fields.optionalString(key) else { return nil }
    guard let data = Data(base64Encoded: text) else { throw fields.error(key, "expected base64") }
    return data
}
