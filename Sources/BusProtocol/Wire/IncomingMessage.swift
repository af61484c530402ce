import ContextBusSupport

/// One received frame, classified: a request, a response, or an invalid message with the error
/// response it earns.
///
/// From a client (`Sender.client`) only requests are valid. The checks run in this order, and
/// the first that fails decides the answer (`docs/protocol.md`, "Messages"):
///
/// | the payload | answer |
/// | --- | --- |
/// | not JSON (bad syntax, invalid UTF-8, nested deeper than the parser allows) | `-32700`, `id: null` |
/// | a JSON array (a batch, not part of v1) | `-32600`, `id: null` |
/// | not a JSON object | `-32600`, `id: null` |
/// | an `id` that is not an integer or a string (`null` included) | `-32600`, `id: null` |
/// | `jsonrpc` missing or not `"2.0"` | `-32600` with the id |
/// | a response (`result`/`error`) instead of a request | `-32600` with the id |
/// | `method` missing or not a string | `-32600` with the id |
/// | `params` present but not an object | `-32600` with the id |
///
/// From a server (`Sender.server`) the valid messages are responses (exactly one of `result`
/// and `error`, an error being an object with an integer `code` and a string `message`; `id` may
/// be `null`) and events (a `method`, no `id`, object `params`). Members not named here are ignored.
package enum IncomingMessage: Sendable, Hashable {
    /// A request or, without an id, a notification; from a server, that is an event.
    case request(RPCRequest)
    /// A response to one of our requests.
    case response(RPCResponse)
    /// An invalid message and the error response it gets (send it if the sender is a client).
    case invalid(RPCResponse)

    /// Who sent the message, which decides what is valid.
    package enum Sender: Sendable, Hashable {
        /// A client: requests and notifications are valid.
        case client
        /// A server: responses and events are valid.
        case server
    }

    /// Classifies one frame's payload.
    package init<Payload: Collection<UInt8>>(
        payload: Payload, from sender: Sender = .client, parser: JSONParser = JSONParser()
    ) {
        do {
            self.init(json: try parser.parse(payload), from: sender)
        } catch {
            self = .invalid(RPCResponse(id: nil, error: .parseError(error)))
        }
    }

    /// Classifies a parsed message.
    package init(json: JSONValue, from sender: Sender = .client) {
        guard case .object(let members) = json else {
            if case .array = json {
                self = .invalid(.init(id: nil, error: .invalidRequest("batches (JSON arrays) are not supported")))
            } else {
                self = .invalid(.init(id: nil, error: .invalidRequest("a message must be a JSON object")))
            }
            return
        }
        switch Self.classify(members, from: sender) {
        case .success(let message): self = message
        case .failure(let invalid): self = .invalid(RPCResponse(id: invalid.id, error: invalid.error))
        }
    }

    /// The request, when this is one.
    package var request: RPCRequest? {
        if case .request(let request) = self { return request }
        return nil
    }

    /// The response, when this is one.
    package var response: RPCResponse? {
        if case .response(let response) = self { return response }
        return nil
    }

    /// The event, when this is a notification (from a server, an event).
    package var event: RPCEvent? {
        guard case .request(let request) = self, request.id == nil else { return nil }
        return RPCEvent(method: request.method, params: request.params ?? .object([:]))
    }

    // MARK: - Checks

    private struct Invalid: Error {
        var id: RPCID?
        var error: RPCError
    }

    private static func classify(_ members: [String: JSONValue], from sender: Sender) -> Result<Self, Invalid> {
        var id: RPCID?
        if let rawID = members["id"] {
            if let parsed = RPCID(json: rawID) {
                id = parsed
            } else if !(rawID.isNull && sender == .server && members["method"] == nil) {
                return .failure(Invalid(error: .invalidRequest("'id' must be an integer or a string")))
            }
        }
        guard members["jsonrpc"] == .string("2.0") else {
            return .failure(Invalid(id: id, error: .invalidRequest(#"'jsonrpc' must be "2.0""#)))
        }
        if members["method"] == nil, members["result"] != nil || members["error"] != nil {
            guard sender == .server else {
                return .failure(Invalid(id: id, error: .invalidRequest("expected a request, got a response")))
            }
            return response(members, id: id)
        }
        guard case .string(let method)? = members["method"] else {
            return .failure(Invalid(id: id, error: .invalidRequest("'method' must be a string")))
        }
        let params = members["params"]
        if let params, params.objectValue == nil {
            return .failure(Invalid(id: id, error: .invalidRequest("'params' must be an object")))
        }
        if sender == .server, id != nil {
            return .failure(Invalid(id: id, error: .invalidRequest("a server sends events, not requests")))
        }
        return .success(.request(RPCRequest(id: id, method: method, params: params)))
    }

    private static func response(_ members: [String: JSONValue], id: RPCID?) -> Result<Self, Invalid> {
        switch (members["result"], members["error"]) {
        case (let result?, nil):
            guard let id else {
                return .failure(Invalid(error: .invalidRequest("a successful response must have an 'id'")))
            }
            return .success(.response(RPCResponse(id: id, result: result)))
        case (nil, let errorObject?):
            guard let error = RPCError(json: errorObject) else {
                return .failure(
                    Invalid(
                        id: id, error: .invalidRequest("'error' must have an integer 'code' and a string 'message'")))
            }
            return .success(.response(RPCResponse(id: id, error: error)))
        default:
            return .failure(
                Invalid(id: id, error: .invalidRequest("a response has exactly one of 'result' and 'error'")))
        }
    }
}
