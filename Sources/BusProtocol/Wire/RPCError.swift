import ContextBusSupport
import ContextBusTransport

/// A JSON-RPC error object, `{"code":409,"message":"…","data":{…}}`, and the error every request
/// handler throws.
///
/// Build one with the static constructor for its code (`RPCError.invalidParams(field:message:)`,
/// `.notFound(_:)`, …) so that `code` and the shape of `data` match `docs/protocol.md`. Match it by code:
///
/// ```swift
/// catch let error as RPCError where error.code == .conflict { … }
/// ```
public struct RPCError: Error, Sendable, Hashable {
    public var code: RPCErrorCode
    /// One line for people; clients branch on `code` and `data`, never on this text.
    public var message: String
    /// Structured detail: `field`, `conflicts`, `errors`, `bluez`, … as the code defines.
    public var data: JSONValue?

    public init(code: RPCErrorCode, message: String, data: JSONValue? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    /// The wire form: `code`, `message`, and `data` when there is some.
    public var json: JSONValue {
        var members: [String: JSONValue] = ["code": .int(Int64(code.rawValue)), "message": .string(message)]
        if let data { members["data"] = data }
        return .object(members)
    }

    /// Reads an error object; `nil` unless it has an integer `code` and a string `message`.
    public init?(json: JSONValue) {
        guard let code = json["code"]?.intValue, let small = Int(exactly: code),
            let message = json["message"]?.stringValue
        else { return nil }
        self.init(code: RPCErrorCode(rawValue: small), message: message, data: json["data"])
    }

    /// `data.field`, for `invalidParams` errors.
    public var field: String? { data?["field"]?.stringValue }

    /// Appends the wire form to `output`.
    func write(into output: inout [UInt8], writer: JSONWriter) throws(JSONWriteError) {
        JSONWriter.appendLiteral(#"{"code":"#, into: &output)
        JSONWriter.appendInteger(Int64(code.rawValue), into: &output)
        JSONWriter.appendLiteral(#","message":"#, into: &output)
        JSONWriter.appendString(message, into: &output)
        if let data {
            JSONWriter.appendLiteral(#","data":"#, into: &output)
            try writer.write(data, into: &output)
        }
        output.append(0x7D)
    }
}

extension RPCError: CustomStringConvertible {
    /// `error 409: …`.
    public var description: String { "error \(code.rawValue): \(message)" }
}

// MARK: - One constructor per code of docs/protocol.md

extension RPCError {
    /// -32700: the payload is not JSON; `data.offset` is where parsing failed.
    public static func parseError(_ error: JSONParseError) -> RPCError {
        RPCError(
            code: .parseError, message: "parse error: \(error)", data: .object(["offset": .int(Int64(error.offset))]))
    }

    /// -32700 with a message of its own.
    public static func parseError(_ message: String) -> RPCError {
        RPCError(code: .parseError, message: message)
    }

    /// -32600: not a JSON-RPC 2.0 request, a batch, or a framing error.
    public static func invalidRequest(_ message: String) -> RPCError {
        RPCError(code: .invalidRequest, message: message)
    }

    /// -32600 for a framing error, the one message a server sends before closing the connection.
    public init(framing error: FrameError) {
        self = .invalidRequest(error.description)
    }

    /// -32601; `data.method` is the name asked for.
    public static func methodNotFound(_ method: String) -> RPCError {
        RPCError(
            code: .methodNotFound, message: "method '\(method)' not found", data: .object(["method": .string(method)]))
    }

    /// -32602; `data.field` names the offending field as a path such as `steps[2].characteristic`
    /// (`nil` when the params as a whole are wrong).
    public static func invalidParams(field: String?, message: String) -> RPCError {
        let text = field.map { "invalid params: \($0): \(message)" } ?? "invalid params: \(message)"
        return RPCError(code: .invalidParams, message: text, data: field.map { .object(["field": .string($0)]) })
    }

    /// -32603. The message must not leak internals such as stack traces or file paths.
    public static func internalError(_ message: String = "internal error") -> RPCError {
        RPCError(code: .internalError, message: message)
    }

    /// 401: `method` was called before `bus.hello`.
    public static func helloRequired(method: String) -> RPCError {
        RPCError(code: .helloRequired, message: "'\(method)' needs bus.hello first")
    }

    /// 403: the peer's credentials are not allowed.
    public static func forbidden(_ message: String) -> RPCError {
        RPCError(code: .forbidden, message: message)
    }

    /// 404: an object, subscription, chain or device that does not exist.
    public static func notFound(_ message: String, data: JSONValue? = nil) -> RPCError {
        RPCError(code: .notFound, message: message, data: data)
    }

    /// 408: a device step or chain timed out (device chains add `ChainFailure` data).
    public static func timeout(_ message: String, data: JSONValue? = nil) -> RPCError {
        RPCError(code: .timeout, message: message, data: data)
    }

    /// 409 with `data.conflicts` (see `SaveConflict` for the typed form).
    public static func conflict(_ message: String, conflicts: [JSONValue]) -> RPCError {
        RPCError(code: .conflict, message: message, data: .object(["conflicts": .array(conflicts)]))
    }

    /// 410: the history no longer reaches back to `since`.
    public static func gone(since: Int64) -> RPCError {
        RPCError(
            code: .gone, message: "the history no longer reaches back to transaction \(since)",
            data: .object(["since": .int(since)]))
    }

    /// 412: the request named the model `requested` (`params.model`), and the store serves `served`, made from it
    /// (or from another) by a migration; `previousVersions` are the served database's earlier models.
    public static func modelChanged(requested: String, served: String, previousVersions: [String]) -> RPCError {
        let history = previousVersions.contains(requested) ? "migrated from it" : "not made from it"
        return RPCError(
            code: .modelChanged,
            message: "this request was made for model \(requested), but the store serves model \(served) "
                + "(\(history)); read store.model again and make the request with the model it returns",
            data: .object([
                "requested": .string(requested), "model": .string(served),
                "previousVersions": .array(previousVersions.map(JSONValue.string)),
            ]))
    }

    /// 422 with `data.errors` (see `ValidationIssue` for the typed form).
    public static func validationFailed(_ message: String, errors: [JSONValue]) -> RPCError {
        RPCError(code: .validationFailed, message: message, data: .object(["errors": .array(errors)]))
    }

    /// 429: more than `limit` requests in flight on one connection; `data.limit` is the limit.
    public static func tooManyRequests(limit: Int) -> RPCError {
        RPCError(
            code: .tooManyRequests, message: "too many requests in flight (the limit is \(limit))",
            data: .object(["limit": .int(Int64(limit))]))
    }

    /// 499: the request was cancelled (device chains add `ChainFailure` data).
    public static func cancelled(_ message: String = "cancelled", data: JSONValue? = nil) -> RPCError {
        RPCError(code: .cancelled, message: message, data: data)
    }

    /// 502: BlueZ or the device failed (device chains add `ChainFailure` data with `bluez`).
    public static func deviceError(_ message: String, data: JSONValue? = nil) -> RPCError {
        RPCError(code: .deviceError, message: message, data: data)
    }

    /// 503: a dependency (BlueZ, the store service) is unavailable.
    public static func unavailable(_ message: String) -> RPCError {
        RPCError(code: .unavailable, message: message)
    }
}
