/// The `code` of a JSON-RPC error: the table in `docs/protocol.md`, "Error codes".
public struct RPCErrorCode: RawRepresentable, Sendable, Hashable {
    public var rawValue: Int

    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// -32700: the payload is not JSON.
    public static let parseError = RPCErrorCode(rawValue: -32700)
    /// -32600: not a JSON-RPC 2.0 request, a framing error, or a batch.
    public static let invalidRequest = RPCErrorCode(rawValue: -32600)
    /// -32601: no such method.
    public static let methodNotFound = RPCErrorCode(rawValue: -32601)
    /// -32602: a missing or mistyped field, unknown entity or attribute, bad predicate; `data.field` names it.
    public static let invalidParams = RPCErrorCode(rawValue: -32602)
    /// -32603: an internal error (never with a stack trace).
    public static let internalError = RPCErrorCode(rawValue: -32603)
    /// 401: `bus.hello` must come first.
    public static let helloRequired = RPCErrorCode(rawValue: 401)
    /// 403: the peer's credentials are not allowed.
    public static let forbidden = RPCErrorCode(rawValue: 403)
    /// 404: no such object, subscription, chain or device.
    public static let notFound = RPCErrorCode(rawValue: 404)
    /// 408: a device step or chain timed out.
    public static let timeout = RPCErrorCode(rawValue: 408)
    /// 409: a save's versions do not match under merge policy `error` (`data.conflicts`).
    public static let conflict = RPCErrorCode(rawValue: 409)
    /// 410: the history no longer reaches back to a subscription's `since`.
    public static let gone = RPCErrorCode(rawValue: 410)
    /// 412: the request was made for a model the store no longer serves (`data.model`, `data.requested`); an
    /// addition to PROTOCOL.md (docs/protocol.md, "Model changes (migration)").
    public static let modelChanged = RPCErrorCode(rawValue: 412)
    /// 422: validation failed (`data.errors`).
    public static let validationFailed = RPCErrorCode(rawValue: 422)
    /// 429: too many requests in flight on the connection.
    public static let tooManyRequests = RPCErrorCode(rawValue: 429)
    /// 499: cancelled.
    public static let cancelled = RPCErrorCode(rawValue: 499)
    /// 502: a BlueZ or device error (`data.bluez`, `data.step`, `data.results`).
    public static let deviceError = RPCErrorCode(rawValue: 502)
    /// 503: a dependency (BlueZ, the store service) is unavailable.
    public static let unavailable = RPCErrorCode(rawValue: 503)
}

extension RPCErrorCode: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: Int) {
        self.init(rawValue: value)
    }
}

extension RPCErrorCode: CustomStringConvertible {
    public var description: String { String(rawValue) }
}
