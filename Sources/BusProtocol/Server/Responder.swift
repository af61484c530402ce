import ContextBusTransport
import ContextBusWire

/// Answers one request of method `M`, once, from any thread and at any time.
///
/// Responder-style handlers get one. The first answer wins; later ones are ignored. If the responder is
/// released without having answered, the request is answered `-32603` (and `onHandlerError` is told), so a
/// forgotten path cannot leave a client waiting forever.
///
/// ```swift
/// server.register(StoreSave.self, ordering: .inOrder, cancellation: .cooperative) { request, params, responder in
///     root.enqueue(params) { outcome in responder.respond(with: outcome) }   // answered when durable
/// }
/// ```
///
/// When `succeed` returns, the response is in the connection's outbound queue: events sent after that follow
/// it on the wire (how `store.subscribe` sends its result before the subscription's first event).
package final class Responder<M: RPCMethod>: Sendable {
    /// The request being answered.
    package let request: BusRequest

    init(request: BusRequest) {
        self.request = request
    }

    deinit {
        if !request.isAnswered {
            request.connection.core.report(method: request.method, error: BusServerError.handlerDidNotAnswer)
            request.connection.answer(request, with: .failure(RPCError.internalError()))
        }
    }

    /// Whether the request has been answered (by this responder, or with `499` after a cancellation).
    package var hasResponded: Bool { request.isAnswered }

    /// Answers with `result`.
    package func succeed(_ result: M.Result) {
        request.connection.answer(request, with: .success(result.json))
    }

    /// Answers with a result that writes its own JSON text (`JSONWritable`), which must be the JSON of an
    /// `M.Result`: for hot methods, where building the result's `JSONValue` tree would cost more than writing it.
    package func succeed(writing result: some JSONWritable) {
        request.connection.answer(request, writing: result)
    }

    /// Answers with `error`: an `RPCError` as it is, a `CancellationError` as `499`, anything else as a bare
    /// `-32603` (its details go to `onHandlerError`, never to the client).
    package func fail(_ error: any Error) {
        request.connection.answer(request, with: .failure(error))
    }

    /// Answers with `outcome`'s result or error.
    package func respond<Failure: Error>(with outcome: Result<M.Result, Failure>) {
        switch outcome {
        case .success(let result): succeed(result)
        case .failure(let error): fail(error)
        }
    }
}

/// Errors the server reports to `Configuration.onHandlerError` (they never reach a client in detail).
package enum BusServerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A responder was released without answering; the request was answered `-32603`.
    case handlerDidNotAnswer
    /// A result or error could not be framed (NaN or infinity in it, or larger than `maxFrame`); the request
    /// was answered `-32603`.
    case unencodableAnswer(MessageEncodingError)
    /// The socket path is not a valid Unix socket address.
    case invalidSocketPath(SocketAddressError)
    /// `start()` was called twice, or after `shutdown`.
    case alreadyStarted

    package var description: String {
        switch self {
        case .handlerDidNotAnswer: return "a handler finished without answering its request"
        case .unencodableAnswer(let error): return "an answer could not be sent: \(error)"
        case .invalidSocketPath(let error): return error.description
        case .alreadyStarted: return "the bus server has already been started"
        }
    }
}
