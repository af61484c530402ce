import ContextBusSupport
public import Foundation

/// What one finished step produced: `{"step":0,"op":"connect","mtu":247}`,
/// `{"step":1,"op":"read","value":"…","number":87.0,"unit":"%"}`,
/// `{"step":3,"op":"notify","values":["…","…"],"numbers":[86.0,85.0],"unit":"%"}`.
///
/// `number` and `unit` (a read's, a descriptor read's) and `numbers` (a notify's, one per value, `null` for a value
/// that did not decode) are there when the characteristic's format is known (docs/device-service.md, "Decoding");
/// the raw bytes stay in `value`/`values`.
public struct StepResult: JSONConvertible, Hashable {
    /// The 0-based index of the step in `steps`.
    public var step: Int
    public var operation: StepOperation
    /// The bytes read, for `read` and `readDescriptor`.
    public var value: Data?
    /// The notifications received, for `notify`.
    public var values: [Data]?
    /// `value` decoded, when its format is known.
    public var number: Double?
    /// `values` decoded, one per value (`nil` for one that did not decode), when the format is known.
    public var numbers: [Double?]?
    /// The unit of `number` or `numbers` (`%`, `°C`, `bpm`).
    public var unit: String?
    /// The link's ATT MTU, on a `connect` step's result when BlueZ reports it.
    public var mtu: Int?

    public init(
        step: Int, operation: StepOperation, value: Data? = nil, values: [Data]? = nil, number: Double? = nil,
        numbers: [Double?]? = nil, unit: String? = nil, mtu: Int? = nil
    ) {
        self.step = step
        self.operation = operation
        self.value = value
        self.values = values
        self.number = number
        self.numbers = numbers
        self.unit = unit
        self.mtu = mtu
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
        number = try fields.optionalDouble("number")
        if fields.value("numbers") != nil {
            numbers = try fields.elements("numbers") { (item, i) throws(RPCError) -> Double? in
                if item.isNull { return nil }
                guard let number = item.doubleValue else {
                    throw .invalidParams(field: fields.path(of: "numbers", index: i), message: "expected a number")
                }
                return number
            }
        }
        unit = try fields.optionalString("unit")
        mtu = try fields.optionalInt("mtu")
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = ["step": .int(Int64(step)), "op": .string(operation.rawValue)]
        if let value { members["value"] = .string(value.base64EncodedString()) }
        if let values { members["values"] = .array(values.map { .string($0.base64EncodedString()) }) }
        if let number { members["number"] = .double(number) }
        if let numbers { members["numbers"] = .array(numbers.map { $0.map(JSONValue.double) ?? .null }) }
        if let unit { members["unit"] = .string(unit) }
        if let mtu { members["mtu"] = .int(Int64(mtu)) }
        return .object(members)
    }
}

/// Reads an optional base64 member as bytes.
func readBase64(_ fields: JSONFields, _ key: String) throws(RPCError) -> Data? {
    guard let text = try fields.optionalString(key) else { return nil }
    guard let data = Data(base64Encoded: text) else { throw fields.error(key, "expected base64") }
    return data
}
