import ContextBusSupport
public import Foundation

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
