import ContextBusSupport
import ContextBusWire

/// One request being handled: its id and method, the connection it came on, and its cancellation.
///
/// A request is cancelled when the client sends `bus.cancel` naming it, or when its connection closes before it
/// was answered. Handlers observe that with `isCancelled` or `onCancel(_:)`; an async handler's task is also
/// cancelled, so `Task.isCancelled`, `Task.checkCancellation()` and cancellation handlers work, and a thrown
/// `CancellationError` is answered `499`.
///
/// ```swift
/// server.register(DeviceRun.self, cancellation: .cooperative) { request, params, responder in
///     let chain = runner.start(params, events: { request.connection.send($0) }, completion: responder.respond)
///     request.onCancel { chain.cancel() }   // the chain answers 499 with its ChainFailure
/// }
/// ```
package final class BusRequest: Sendable, CustomStringConvertible {
    /// The id the client chose.
    package let id: RPCID
    /// The method name, such as `store.save`.
    package let method: String
    /// The connection the request came on: its peer, and where to send events.
    package let connection: BusConnection
    let cancellationMode: CancellationMode
    private let state = Locked(State())

    private struct State {
        var isStarted = false
        var isCancelled = false
        var isAnswered = false
        var cancelActions: [@Sendable () -> Void] = []
        var task: Task<Void, Never>?
    }

    init(id: RPCID, method: String, connection: BusConnection, cancellationMode: CancellationMode) {
        self.id = id
        self.method = method
        self.connection = connection
        self.cancellationMode = cancellationMode
    }

    package var description: String { "\(method) #\(id) on \(connection)" }

    /// Whether the client cancelled the request or its connection closed.
    package var isCancelled: Bool { state.withLock { $0.isCancelled } }

    /// Whether an answer has been sent (or dropped because the request was cancelled or its connection closed).
    package var isAnswered: Bool { state.withLock { $0.isAnswered } }

    /// Runs `action` once when the request is cancelled (at once if it already is), on the server's handler
    /// queue.
    package func onCancel(_ action: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { state -> Bool in
            if state.isCancelled { return true }
            state.cancelActions.append(action)
            return false
        }
        if runNow { connection.core.handlerQueue.async(execute: action) }
    }

    // MARK: - Life cycle (used by the connection and the handler glue)

    /// Marks the handler as started; `false` when the request was cancelled before its turn came (it has been
    /// answered `499` and must not run).
    func markStarted() -> Bool {
        state.withLock { state -> Bool in
            guard !state.isCancelled, !state.isAnswered else { return false }
            state.isStarted = true
            return true
        }
    }

    /// Records the task running an async handler, so that cancellation reaches it.
    func attach(_ task: Task<Void, Never>) {
        let cancelNow = state.withLock { state -> Bool in
            state.task = task
            return state.isCancelled
        }
        if cancelNow { task.cancel() }
    }

    /// Claims the one answer; `false` when the request has been answered already.
    func claimAnswer() -> Bool {
        state.withLock { state -> Bool in
            guard !state.isAnswered else { return false }
            state.isAnswered = true
            state.task = nil
            return true
        }
    }

    /// Cancels the request (idempotent).
    ///
    /// - Returns: whether the server must answer `499` now: the mode is `.immediate`, or the handler had not
    ///   started yet.
    func cancel() -> Bool {
        let (actions, task, answersNow) = state.withLock {
            state -> ([@Sendable () -> Void], Task<Void, Never>?, Bool) in
            guard !state.isCancelled else { return ([], nil, false) }
            state.isCancelled = true
            defer { state.cancelActions = [] }
            let answersNow = !state.isAnswered && (cancellationMode == .immediate || !state.isStarted)
            return (state.cancelActions, state.task, answersNow)
        }
        task?.cancel()
        if !actions.isEmpty {
            connection.core.handlerQueue.async {
                for action in actions { action() }
            }
        }
        return answersNow
    }
}
