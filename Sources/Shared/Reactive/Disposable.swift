import ContextBusSupport
import Synchronization

/// Something that can be cancelled or cleaned up, once, from any thread.
///
/// Disposing a started signal's disposable interrupts the signal: its observer receives `interrupted` (unless
/// it already terminated) and its cleanup runs exactly once.
public protocol Disposable: AnyObject, Sendable {
    /// Whether `dispose()` has been called (or the work it would cancel has already ended).
    var isDisposed: Bool { get }

    /// Cancels or cleans up. Idempotent; safe from any thread.
    func dispose()
}

/// A disposable that runs an action once when disposed (an "action disposable"), or that only records the call.
public final class AnyDisposable: Disposable {
    private let action: Locked<(@Sendable () -> Void)?>
    private let disposed = Atomic<Bool>(false)

    /// A disposable that only records that it was disposed.
    public init() {
        action = Locked(nil)
    }

    /// A disposable that runs `action` the first time it is disposed, then lets go of it.
    public init(_ action: @escaping @Sendable () -> Void) {
        self.action = Locked(action)
    }

    /// Wraps another disposable (for example to hide its concrete type or extra API).
    public convenience init(_ disposable: any Disposable) {
        self.init { disposable.dispose() }
    }

    public var isDisposed: Bool { disposed.load(ordering: .acquiring) }

    public func dispose() {
        guard !disposed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let action = self.action.withLock { action -> (@Sendable () -> Void)? in
            defer { action = nil }
            return action
        }
        action?()
    }
}

/// A disposable that disposes its inner disposable when it is itself deinitialised.
///
/// Useful to tie a started signal to the life of an object: store a `ScopedDisposable` in it.
public final class ScopedDisposable<Inner: Disposable>: Disposable {
    /// The disposable disposed with this one.
    public let inner: Inner

    public init(_ inner: Inner) {
        self.inner = inner
    }

    deinit {
        inner.dispose()
    }

    public var isDisposed: Bool { inner.isDisposed }

    public func dispose() {
        inner.dispose()
    }
}

extension Disposable {
    /// Wraps this disposable so that it is disposed when the wrapper is deinitialised.
    public func scoped() -> ScopedDisposable<Self> {
        ScopedDisposable(self)
    }
}
