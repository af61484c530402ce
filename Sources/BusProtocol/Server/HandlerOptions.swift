import ContextBusSupport

/// How the requests of one method are scheduled relative to the other requests of the same connection.
package enum HandlerOrdering: Sendable, Hashable {
    /// Each request runs as soon as it arrives, concurrently with everything else (the default).
    case concurrent
    /// The connection's `.inOrder` requests (of every method registered so) run one at a time, in the order they
    /// arrived; concurrent requests of the same connection still run beside them.
    ///
    /// An async handler holds the connection's turn until it returns. A responder handler holds it until its
    /// closure returns, so it can hand the work to an ordered queue of its own (the root context's), return,
    /// and answer later: this keeps docs/protocol.md's "store.save requests from one connection are applied in the
    /// order they were received" without waiting for one save's disk write before taking the next.
    case inOrder
}

/// What `bus.cancel` does to a request of a method.
package enum CancellationMode: Sendable, Hashable {
    /// The request is answered `499` at once; the handler is told (`BusRequest.isCancelled`, `onCancel`, task
    /// cancellation for async handlers) and whatever it answers later is dropped. The default.
    case immediate
    /// A handler that has started decides the answer: it observes the cancellation and answers, usually `499`
    /// with data of its own (a device chain's `ChainFailure`), or its result if the work could no longer be
    /// stopped. A request still waiting for its `.inOrder` turn is answered `499` at once and never runs.
    case cooperative
}

/// A registered method: how to run one request of it.
struct MethodHandler: Sendable {
    var ordering: HandlerOrdering
    var cancellation: CancellationMode
    /// Starts the request without blocking the caller (a task, or a block on the handler queue) and calls
    /// `finished` when the handler has returned, to let the connection's next `.inOrder` request run.
    var start:
        @Sendable (_ request: BusRequest, _ params: JSONValue?, _ finished: @escaping @Sendable () -> Void)
            -> Void
}

/// Where a responder handler runs: on the server's handler queue (the default), or on the connection's event
/// loop thread, which reads its frames.
///
/// Each hand-off between threads costs a wake-up, and on a busy machine a wait for a CPU. A handler that never
/// blocks and does little (queues a save for a writer that answers later; reads one row) may run on the loop,
/// right after its frame is parsed: no hand-off at all before its answer is written. While it runs, the loop
/// serves none of its other connections, so keep it short; `eventLoop(when:)` decides per request, from the
/// typed params, and sends the others to the handler queue.
package struct HandlerPlacement<Params>: Sendable {
    let runsOnLoop: (@Sendable (Params) -> Bool)?

    /// Every request on the handler queue, where the handler may block.
    package static var handlerQueue: Self { Self(runsOnLoop: nil) }

    /// Every request on the connection's loop: for handlers that never block.
    package static var eventLoop: Self { Self(runsOnLoop: { _ in true }) }

    /// On the loop the requests whose params satisfy `condition` (e.g. a read of a few objects), the others on
    /// the handler queue.
    package static func eventLoop(when condition: @escaping @Sendable (Params) -> Bool) -> Self {
        Self(runsOnLoop: condition)
    }
}
