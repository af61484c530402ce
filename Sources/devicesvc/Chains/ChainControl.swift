import Shared

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
        let token = AnyDisposable()
        let wrapped: @Sendable () -> Void = { if !token.isDisposed { listener() } }
        let cancelledAlready = state.withLock { state -> Bool in
            if state.isCancelled { return true }
            state.listener = wrapped
            return false
        }
        if cancelledAlready { listener() }
        return token
    }
}
