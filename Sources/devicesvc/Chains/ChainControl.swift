import ContextBusReactive
import ContextBusSupport

/// The cancel switch of one chain, shared by the service (which flips it) and the chain's signal (which
/// listens while it is queued, then while it runs).
///
/// Whoever listens at the moment of `cancel()` hears it once; a listener that arrives after the chain was
/// cancelled hears it at once. So a chain cancelled while queued fails without its steps ever starting, and
/// one cancelled while running fails its current step and then disconnects.
final class ChainControl: Sendable {
    private let state = Locked(State())

    private struct State {
        var isCancelled = false
        var listener: (@Sendable () -> Void)?
        /// Which `listen` call installed `listener`, so that disposing an older one leaves a newer one in place.
        var listenerToken = 0
    }

    /// Whether `cancel()` was called.
    var isCancelled: Bool { state.withLock { $0.isCancelled } }

    /// Cancels the chain. Idempotent.
    func cancel() {
        let listener = state.withLock { state -> (@Sendable () -> Void)? in
            guard !state.isCancelled else { return nil }
            state.isCancelled = true
            defer { state.listener = nil }
            return state.listener
        }
        listener?()
    }

    /// Makes `listener` the one to hear a cancellation, replacing the previous one; calls it at once if the
    /// chain is already cancelled.
    ///
    /// - Returns: a disposable that removes `listener` (if it is still the current one).
    func listen(_ listener: @escaping @Sendable () -> Void) -> any Disposable {
        let disposed = Locked(false)
        let wrapped: @Sendable () -> Void = { if !disposed.withLock({ $0 }) { listener() } }
        let (cancelledAlready, number) = state.withLock { state -> (Bool, Int) in
            if state.isCancelled { return (true, 0) }
            state.listenerToken += 1
            state.listener = wrapped
            return (false, state.listenerToken)
        }
        if cancelledAlready { listener() }
        // Disposing releases the listener at once: it captures the chain's observer, which (through the request's
        // handler) holds this control, and kept until the control died that cycle leaked every finished chain.
        return AnyDisposable { [state] in
            disposed.withLock { $0 = true }
            state.withLock { state in
                if state.listenerToken == number { state.listener = nil }
            }
        }
    }
}
