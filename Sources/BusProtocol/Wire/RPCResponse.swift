import ContextBusObjectGraph
import ContextBusSupport

/// A response: `{"jsonrpc":"2.0","id":7,"result":…}` or `{"jsonrpc":"2.0","id":7,"error":{…}}`.
///
/// `id` is `nil` (written as `null`) only for errors about a message whose id could not be read.
package struct RPCResponse: RPCMessage, Hashable {
    package var id: RPCID?
    package var outcome: Result<JSONValue, RPCError>

    package init(id: RPCID?, outcome: Result<JSONValue, RPCError>) {
        self.id = id
        self.outcome = outcome
    }

    /// A successful response.
    package init(id: RPCID, result: JSONValue) {
        self.init(id: id, outcome: .success(result))
    }

    /// A successful response with a typed result.
    package init<Result: WireValue>(id: RPCID, result: Result) {
        self.init(id: id, outcome: .success(result.json))
    }

    /// An error response.
    package init(id: RPCID?, error: RPCError) {
        self.init(id: id, outcome: .failure(error))
    }

    /// The result, when the request succeeded.
    package var result: JSONValue? {
        if case .success(let value) = outcome { return value }
        return nil
    }

    /// The error, when the request failed.
    package var error: RPCError? {
        if case .failure(let error) = outcome { return error }
        return nil
    }

    /// The result read as `M.Result`, or the response's error thrown.
    ///
    /// - Throws: the response's `RPCError`, or `invalidParams` naming the field when the result
    ///   does not have `M.Result`'s shape.
    package func result<M: RPCMethod>(for method: M.Type, model: Model? = nil) throws(RPCError) -> M.Result {
        switch outcome {
        case .success(let value): return try M.Result(json: value, model: model)
        case .failure(let error): throw error
        }
    }

    package var json: JSONValue {
        var members: [String: JSONValue] = ["jsonrpc": .string("2.0"), "id": id?.json ?? .null]
        switch outcome {
        case .success(let value): members["result"] = value
        case .failure(let error): members["error"] = error.json
        }
        return .object(members)
    }

    package func write(into output: inout [UInt8], writer: JSONWriter) throws(JSONWriteError) {
        JSONWriter.appendLiteral(#"{"jsonrpc":"2.0","id":"#, into: &output)
        if let id { id.write(into: &output) } else { JSONWriter.appendLiteral("null", into: &output) }
        switch outcome {
        case .success(let value):
            JSONWriter.appendLiteral(#","result":"#, into: &output)
            try writer.write(value, into: &output)
        case .failure(let error):
            JSONWriter.appendLiteral(#","error":"#, into: &output)
            try error.write(into: &output, writer: writer)
        }
        output.append(0x7D)
    }
}
