import ContextBusSupport

/// A registration made by `observeChanges`; `cancel()` (or releasing it) stops delivery.
public final class StoreObservation: Sendable {
    private let onCancel: @Sendable () -> Void
    private let cancelled = AtomicFlag()

    public init(onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = onCancel
    }

    /// Stops delivery; safe to call more than once and from any thread.
    public func cancel() {
        if cancelled.setOnce() { onCancel() }
    }

    deinit { cancel() }
}
