import ContextBusSupport

/// The `id` of a JSON-RPC request: a number or a string chosen by the client, echoed in the response.
///
/// Numbers must be integers (JSON-RPC 2.0: "Numbers SHOULD NOT contain fractional parts");
/// `7.0` reads as `7`, while `7.5`, `null`, booleans, arrays and objects are not IDs.
public enum RPCID: Sendable, Hashable {
    case number(Int64)
    case string(String)

    /// Reads an ID; `nil` when `json` is not an integer or a string.
    public init?(json: JSONValue) {
        switch json {
        case .string(let s): self = .string(s)
        case .int(let i): self = .number(i)
        case .double(let d):
            guard let i = Int64(exactly: d) else { return nil }
            self = .number(i)
        default: return nil
        }
    }

    /// The wire form.
    public var json: JSONValue {
        switch self {
        case .number(let n): return .int(n)
        case .string(let s): return .string(s)
        }
    }

    /// Appends the wire form to `output`.
    public func write(into output: inout [UInt8]) {
        switch self {
        case .number(let n): JSONWriter.appendInteger(n, into: &output)
        case .string(let s): JSONWriter.appendString(s, into: &output)
        }
    }
}

extension RPCID: ExpressibleByIntegerLiteral, ExpressibleByStringLiteral {
    public init(integerLiteral value: Int64) {
        self = .number(value)
    }

    public init(stringLiteral value: String) {
        self = .string(value)
    }
}

extension RPCID: CustomStringConvertible {
    /// `7` or `"abc"`, as on the wire.
    public var description: String {
        switch self {
        case .number(let n): return String(n)
        case .string(let s): return "\"\(s)\""
        }
    }
}
