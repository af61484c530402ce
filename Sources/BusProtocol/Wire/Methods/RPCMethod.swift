import ContextBusSupport

/// A value with a JSON wire form: the params and results of methods, and the payloads of events.
///
/// `init(json:)` is strict about what it needs and ignores members it does not know, so that
/// newer peers may add fields. A JSON `null` counts as absent for optional fields.
public protocol JSONConvertible: Sendable {
    /// Reads the wire form.
    ///
    /// - Throws: `RPCError.invalidParams(field:message:)` with `data.field` naming the offending
    ///   field as a path (`steps[2].characteristic`).
    init(json: JSONValue) throws(RPCError)

    /// The wire form.
    var json: JSONValue { get }
}

/// One method of the protocol: its name and the shapes of its params and result.
///
/// ```swift
/// let params = try request.params(for: StoreFetch.self)
/// let response = RPCResponse(id: id, result: FetchResult(txn: 12, content: .count(3)))
/// ```
public protocol RPCMethod {
    associatedtype Params: JSONConvertible
    associatedtype Result: JSONConvertible
    /// The `method` string, such as `store.fetch`.
    static var name: String { get }
}

/// The params of an event (a server notification), with the event's `method` string.
public protocol RPCEventPayload: JSONConvertible {
    static var method: String { get }
}

/// `{}`: the params of methods that take none, and the result of methods that return nothing.
///
/// Reading accepts any object (unknown members are ignored, as everywhere).
public struct EmptyObject: JSONConvertible, Hashable {
    public init() {}

    public init(json: JSONValue) throws(RPCError) {
        _ = try JSONFields(json)
    }

    public var json: JSONValue { .object([:]) }
}
