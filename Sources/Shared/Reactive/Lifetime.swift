/// The lifetime of one started signal: it ends, exactly once, when the signal terminates or is disposed.
///
/// A producer receives its started signal's lifetime and ties its cleanup to it:
///
/// ```swift
/// Signal<Data, SocketError> { observer, lifetime in
///     let socket = Socket(…)
///     lifetime += socket.readLoop(sending: observer)   // a Disposable
///     lifetime.observeEnded { socket.close() }
/// }
/// ```
///
/// Everything added runs once, in the order it was added, on the thread that ends the lifetime. Adding to an
/// ended lifetime runs the addition at once.
public struct Lifetime: Sendable {
    @usableFromInline
    let disposables: CompositeDisposable

    @inlinable
    init(_ disposables: CompositeDisposable) {
        self.disposables = disposables
    }

    /// Whether the lifetime has ended. A producer that loops can check this to stop early.
    @inlinable
    public var hasEnded: Bool { disposables.isDisposed }

    /// Runs `action` when the lifetime ends (at once if it already has).
    ///
    /// - Returns: a disposable that unregisters `action` without running it, or nil if the lifetime had ended.
    @discardableResult
    public func observeEnded(_ action: @escaping @Sendable () -> Void) -> (any Disposable)? {
        disposables.add(action)
    }

    /// Disposes `disposable` when the lifetime ends (at once if it already has).
    public static func += (lifetime: Lifetime, disposable: (any Disposable)?) {
        lifetime.disposables += disposable
    }

    /// A lifetime that has already ended.
    public static var empty: Lifetime {
        let disposables = CompositeDisposable()
        disposables.dispose()
        return Lifetime(disposables)
    }

    /// Makes a lifetime that ends when the returned token is deinitialised (or ended explicitly).
    ///
    /// Store the token in the object whose life the lifetime should follow.
    public static func make() -> (lifetime: Lifetime, token: Token) {
        let token = Token()
        return (Lifetime(token.disposables), token)
    }

    /// Ends its lifetime when deinitialised.
    public final class Token: Sendable {
        fileprivate let disposables = CompositeDisposable()

        fileprivate init() {}

        deinit {
            disposables.dispose()
        }

        /// Ends the lifetime now.
        public func end() {
            disposables.dispose()
        }
    }
}
