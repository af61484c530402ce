import ContextBusSupport

/// Holds one disposable at a time: replacing it disposes the previous one.
///
/// Once the serial disposable is disposed, whatever is (or is later) put in it is disposed at once.
public final class SerialDisposable: Disposable {
    private struct State {
        var inner: (any Disposable)?
        var isDisposed = false
    }

    private let state = Locked(State())

    public init(_ inner: (any Disposable)? = nil) {
        state.withLock { $0.inner = inner }
    }

    public var isDisposed: Bool { state.withLock { $0.isDisposed } }

    /// The current disposable. Setting it disposes the one it replaces (or the new one, if already disposed).
    public var inner: (any Disposable)? {
        get { state.withLock { $0.inner } }
        set {
            let toDispose = state.withLock { state -> (any Disposable)? in
                if state.isDisposed { return newValue }
                defer { state.inner = newValue }
                return state.inner === newValue ? nil : state.inner
            }
            toDispose?.dispose()
        }
    }

    public func dispose() {
        let inner = state.withLock { state -> (any Disposable)? in
            guard !state.isDisposed else { return nil }
            state.isDisposed = true
            defer { state.inner = nil }
            return state.inner
        }
        inner?.dispose()
    }
}
