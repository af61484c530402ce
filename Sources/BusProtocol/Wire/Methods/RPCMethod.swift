import ContextBusObjectGraph
import ContextBusSupport

/// A value with a JSON wire form: the params and results of methods, and the payloads of events.
///
/// `init(json:)` is strict about what it needs and ignores members it does not know, so that
/// newer peers may add fields. A JSON `null` counts as absent for optional fields.
public protocol JSONConvertible: WireValue {
    /// Reads the wire form.
    ///
    /// - Throws: `RPCError.invalidParams(field:message:)` with `data.field` naming the offending
    ///   field as a path (`steps[2].characteristic`).
    init(json: JSONValue) throws(RPCError)

    /// The wire form.
    var json: JSONValue { get }
}

/// A value whose JSON wire form is read with the store's model: object values typed by the model's attribute
/// types (`"2026-11-28T10:00:00.000Z"` is a date for a date attribute, a string for a string one).
///
/// The store's own values (`SaveRequest`, `SaveResult`, `ChangeSet`, `ObjectSnapshot`, the fetch results) have
/// this one form on the wire (docs/protocol.md): there is no separate wire mirror of them.
public protocol ModelJSONConvertible: WireValue {
    /// Reads the wire form, typing values with `model`.
    ///
    /// - Throws: `RPCError.invalidParams(field:message:)` naming the offending field as a path.
    init(json: JSONValue, model: Model) throws(RPCError)

    /// The wire form.
    var json: JSONValue { get }
}

/// What a method's params and result are: read with the model where they need one (`ModelJSONConvertible`), or
/// without (`JSONConvertible`).
public protocol WireValue: Sendable {
    /// Reads the wire form; `model` is the store's model when the reader has it.
    ///
    /// - Throws: `RPCError.invalidParams(field:message:)`; for a value that needs a model, also when `model`
    ///   is `nil`.
    init(json: JSONValue, model: Model?) throws(RPCError)

    /// The wire form.
    var json: JSONValue { get }
}

extension JSONConvertible {
    public init(json: JSONValue, model: Model?) throws(RPCError) {
        try self.init(json: json)
    }
}

extension ModelJSONConvertible {
    public init(json: JSONValue, model: Model?) throws(RPCError) {
        guard let model else {
            throw .invalidParams(field: "", message: "reading a \(Self.self) needs the store's model")
        }
        try self.init(json: json, model: model)
    }
}

/// One method of the protocol: its name and the shapes of its params and result.
///
/// ```swift
/// let params = try request.params(for: StoreFetch.self)
/// let response = RPCResponse(id: id, result: StoreFetchResult(txn: 12, content: .count(3)))
/// ```
public protocol RPCMethod {
    associatedtype Params: WireValue
    associatedtype Result: WireValue
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
