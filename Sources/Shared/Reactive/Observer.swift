/// Receives the events of a started signal.
///
/// A producer (the closure given to `Signal.init(_:)`) sends events into an observer; `Signal.start(_:)`
/// delivers events to one. The observer handed to a producer enforces the contract: after a terminal event
/// it drops everything, and events sent concurrently or recursively are serialised (see
/// docs/ReactiveContracts.md). An observer you create yourself is a plain set of callbacks.
///
/// ```swift
/// let ticks = Signal<Int, Never> { observer, lifetime in
///     observer.send(value: 1)
///     observer.sendCompleted()
/// }
/// ```
public final class Observer<Value: Sendable, Failure: Error>: Sendable {
    @usableFromInline
    let valueAction: @Sendable (Value) -> Void
    @usableFromInline
    let terminationAction: @Sendable (Termination<Failure>) -> Void

    @usableFromInline
    init(
        value valueAction: @escaping @Sendable (Value) -> Void,
        termination terminationAction: @escaping @Sendable (Termination<Failure>) -> Void
    ) {
        self.valueAction = valueAction
        self.terminationAction = terminationAction
    }

    /// Creates an observer that passes every event to `action`.
    @inlinable
    public convenience init(_ action: @escaping @Sendable (Event<Value, Failure>) -> Void) {
        self.init(value: { action(.value($0)) }, termination: { action($0.event()) })
    }

    /// Creates an observer from a callback per kind of event; a missing callback ignores its events.
    ///
    /// - Parameters:
    ///   - value: called for each value.
    ///   - failed: called if the signal fails.
    ///   - completed: called if the signal completes.
    ///   - interrupted: called if the signal is interrupted (disposed).
    @inlinable
    public convenience init(
        value: (@Sendable (Value) -> Void)? = nil,
        failed: (@Sendable (Failure) -> Void)? = nil,
        completed: (@Sendable () -> Void)? = nil,
        interrupted: (@Sendable () -> Void)? = nil
    ) {
        self.init(
            value: value ?? { _ in },
            termination: { termination in
                switch termination {
                case .failed(let error): failed?(error)
                case .completed: completed?()
                case .interrupted: interrupted?()
                }
            })
    }

    /// Sends a value.
    @inlinable
    public func send(value: Value) {
        valueAction(value)
    }

    /// Sends a failure; terminal.
    @inlinable
    public func send(error: Failure) {
        terminationAction(.failed(error))
    }

    /// Sends `completed`; terminal.
    @inlinable
    public func sendCompleted() {
        terminationAction(.completed)
    }

    /// Sends `interrupted`; terminal.
    @inlinable
    public func sendInterrupted() {
        terminationAction(.interrupted)
    }

    /// Sends any event.
    @inlinable
    public func send(_ event: Event<Value, Failure>) {
        switch event {
        case .value(let value): valueAction(value)
        case .failed(let error): terminationAction(.failed(error))
        case .completed: terminationAction(.completed)
        case .interrupted: terminationAction(.interrupted)
        }
    }

    @inlinable
    func send(_ termination: Termination<Failure>) {
        terminationAction(termination)
    }
}
