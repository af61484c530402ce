import ContextBusSupport

/// An event, a notification from the server: `{"jsonrpc":"2.0","method":"store.changed","params":{…}}`.
public struct RPCEvent: RPCMessage, Hashable {
    public var method: String
    public var params: JSONValue

    public init(method: String, params: JSONValue) {
        self.method = method
        self.params = params
    }

    /// An event with a typed payload.
    public init<Payload: RPCEventPayload>(_ payload: Payload) {
        self.init(method: Payload.method, params: payload.json)
    }

    /// Reads the params as `Payload`.
    ///
    /// - Throws: `RPCError.invalidParams(field:message:)` naming the offending field.
    public func payload<Payload: RPCEventPayload>(as type: Payload.Type) throws(RPCError) -> Payload {
        try Payload(json: params)
    }

    public var json: JSONValue {
        .object(["jsonrpc": .string("2.0"), "method": .string(method), "params": params])
    }

    public func write(into output: inout [UInt8], writer: JSONWriter) throws(JSONWriteError) {
        JSONWriter.appendLiteral(#"{"jsonrpc":"2.0","method":"#, into: &output)
        JSONWriter.appendString(method, into: &output)
        JSONWriter.appendLiteral(#","params":"#, into: &output)
        try writer.write(params, into: &output)
        output.append(0x7D)
    }
}
