import Synchronization

extension Signal {
    /// Starts the signal, delivering its events to `observer`.
    ///
    /// - Returns: a disposable that interrupts this run: the observer receives `interrupted` (unless the run
    ///   already terminated), and the run's cleanup, timers and upstream work are cancelled, exactly once.
    @inlinable
    @discardableResult
    public func start(_ observer: Observer<Value, Failure>) -> any Disposable {
        let disposables = CompositeDisposable()
        let terminated = Atomic<Bool>(false)
        let top = Observer<Value, Failure>(
            value: { value in
                // Defence in depth: the gates already guarantee this.
                guard !terminated.load(ordering: .relaxed) else { return }
                observer.valueAction(value)
            },
            termination: { termination in
                guard !terminated.exchange(true, ordering: .relaxed) else { return }
                disposables.dispose()
                observer.terminationAction(termination)
            })
        run(top, Lifetime(disposables))
        return disposables
    }

    /// Starts the signal, passing every event to `action`.
    @inlinable
    @discardableResult
    public func start(_ action: @escaping @Sendable (Event<Value, Failure>) -> Void) -> any Disposable {
        start(Observer(action))
    }

    /// Starts the signal, passing each value to `action` and ignoring the terminal event.
    @inlinable
    @discardableResult
    public func startWithValues(_ action: @escaping @Sendable (Value) -> Void) -> any Disposable {
        start(Observer(value: action))
    }

    /// Starts the signal, calling `action` with the error if it fails.
    @inlinable
    @discardableResult
    public func startWithFailed(_ action: @escaping @Sendable (Failure) -> Void) -> any Disposable {
        start(Observer(failed: action))
    }

    /// Starts the signal, calling `action` if it completes.
    @inlinable
    @discardableResult
    public func startWithCompleted(_ action: @escaping @Sendable () -> Void) -> any Disposable {
        start(Observer(completed: action))
    }

    /// Starts the signal, calling `action` if it is interrupted.
    @inlinable
    @discardableResult
    public func startWithInterrupted(_ action: @escaping @Sendable () -> Void) -> any Disposable {
        start(Observer(interrupted: action))
    }
}
