import ContextBusObjectGraph
import ContextBusSupport

/// A request from a client: `{"jsonrpc":"2.0","id":7,"method":"store.fetch","params":{…}}`.
///
/// Without an `id` it is a notification, which gets no response.
package struct RPCRequest: RPCMessage, Hashable {
    package var id: RPCID?
    package var method: String
    /// The params object, or `nil` when the request has none.
    package var params: JSONValue?

    package init(id: RPCID?, method: String, params: JSONValue? = nil) {
        self.id = id
        self.method = method
        self.params = params
    }

    /// A request for `M` with typed params.
    package init<M: RPCMethod>(id: RPCID?, _ method: M.Type, params: M.Params) {
        self.init(id: id, method: M.name, params: params.json)
    }

    /// Whether the request expects no response.
    package var isNotification: Bool { id == nil }

    /// Reads the params as `M.Params` (absent params read as `{}`), with `model` when they need one.
    ///
    /// - Throws: `RPCError.invalidParams(field:message:)` naming the offending field.
    package func params<M: RPCMethod>(for method: M.Type, model: Model? = nil) throws(RPCError) -> M.Params {
        try M.Params(json: params ?? .object([:]), model: model)
    }

    package var json: JSONValue {
        var members: [String: JSONValue] = ["jsonrpc": .string("2.0"), "method": .string(method)]
        if let id { members["id"] = id.json }
        if let params { members["params"] = params }
        return .object(members)
    }

    package func write(into output: inout [UInt8], writer: JSONWriter) throws(JSONWriteError) {
        JSONWriter.appendLiteral(#"{"jsonrpc":"2.0""#, into: &output)
        if let id {
            JSONWriter.appendLiteral(#","id":"#, into: &output)
            id.write(into: &output)
        }
        JSONWriter.appendLiteral(#","method":"#, into: &output)
        JSONWriter.appendString(method, into: &output)
        if let params {
            JSONWriter.appendLiteral(#","params":"#, into: &output)
            try writer.write(params, into: &output)
        }
        output.append(0x7D)
    }
}
