/// A cold, lazy stream of events: a recipe that runs its producer each time it is started.
///
/// Nothing happens until `start` is called; each start runs the producer again with a new observer and a new
/// `Lifetime`, and returns a disposable that interrupts that run. A started signal sends any number of values,
/// then at most one terminal event (`failed`, `completed` or `interrupted`); after it, nothing more is
/// delivered. Events of one started signal are serial and never delivered recursively. The full contract is in
/// docs/ReactiveContracts.md.
///
/// ```swift
/// let readings = Signal<Int, DeviceError> { observer, lifetime in
///     let subscription = device.onReading { observer.send(value: $0) }
///     lifetime.observeEnded { subscription.cancel() }
/// }
/// let disposable = readings
///     .filter { $0 > 0 }
///     .take(first: 10)
///     .deliver(on: scheduler)
///     .startWithValues { print($0) }
/// ```
///
/// How a start is wired: operators wrap the downstream observer on their way down to the producer, so a chain
/// of `map`/`filter`/… costs one closure call per operator per event and shares the run's single lifetime.
/// Operators that start other signals (`flatMap`, `merge`, `retry`, …) start them as *nested runs* whose
/// lifetimes end with their own terminal event or with the enclosing run.
///
/// ```
///   start(observer) ──creates──▶ Lifetime (CompositeDisposable) ◀──dispose()── returned Disposable
///        │                          ▲ cleanup, timers, nested runs, the gate
///        ▼                          │
///   producer(gated observer, lifetime) ─▶ EventGate ─▶ filter ─▶ take ─▶ deliver(on:) ─▶ observer
/// ```
public struct Signal<Value: Sendable, Failure: Error>: Sendable {
    /// How the signal produces its events. The constant cases let `flatMap` and friends use signals such as
    /// `Signal(value:)` without starting anything.
    @usableFromInline
    enum Body: Sendable {
        case value(Value)
        case failure(Failure)
        case empty
        /// A trusted producer: it follows the contract on its own (no gate is put in front of it).
        case producer(@Sendable (Observer<Value, Failure>, Lifetime) -> Void)
        /// A producer given to `Signal.init(_:)`: it runs behind an `EventGate` (or, as an inner signal of
        /// `flatMap`, behind the flattener's own gate, `FlattenedRun`). Kept bare rather than wrapped in a
        /// closure that makes the gate, so that making such a signal costs no allocation of its own.
        case gated(@Sendable (Observer<Value, Failure>, Lifetime) -> Void)
    }

    @usableFromInline
    let body: Body

    /// Schedulers this signal is known to need in order to deliver its events (recorded by `deliver(on:)`,
    /// `start(on:)`, `Signal.lazy(on:)` and the time-based operators). Blocking `first()` refuses to wait on the
    /// thread of any of them. See "Blocking first()" in docs/ReactiveContracts.md.
    @inlinable
    var deliverySchedulers: [any Scheduler] { schedulers ?? [] }

    /// nil rather than empty, so that copying a signal on the hot path costs no reference counting.
    @usableFromInline
    let schedulers: [any Scheduler]?

    @inlinable
    init(body: Body, deliverySchedulers: [any Scheduler] = []) {
        self.body = body
        self.schedulers = deliverySchedulers.isEmpty ? nil : deliverySchedulers
    }

    /// A signal with a trusted producer (used by operators, which follow the contract themselves).
    @inlinable
    init(
        deliverySchedulers: [any Scheduler] = [],
        trusted producer: @escaping @Sendable (Observer<Value, Failure>, Lifetime) -> Void
    ) {
        self.init(body: .producer(producer), deliverySchedulers: deliverySchedulers)
    }

    /// Creates a signal that runs `producer` each time it is started.
    ///
    /// The producer sends events into `observer` (from any thread) and ties its cleanup to `lifetime`, which
    /// ends when the signal terminates or is disposed. The observer drops everything after the first terminal
    /// event and serialises events sent concurrently or recursively, so a producer cannot break the contract.
    /// When the lifetime ends before the producer terminated, the observer's downstream receives `interrupted`.
    ///
    /// - Parameter producer: called once per start, on the starting thread.
    @inlinable
    public init(_ producer: @escaping @Sendable (_ observer: Observer<Value, Failure>, _ lifetime: Lifetime) -> Void) {
        self.init(body: .gated(producer))
    }

    /// A signal that sends one value, then completes.
    @inlinable
    public init(value: Value) {
        self.init(body: .value(value))
    }

    /// A signal that fails at once.
    @inlinable
    public init(error: Failure) {
        self.init(body: .failure(error))
    }

    /// A signal that sends `result`'s value and completes, or fails with its error.
    @inlinable
    public init(result: Result<Value, Failure>) {
        switch result {
        case .success(let value): self.init(value: value)
        case .failure(let error): self.init(error: error)
        }
    }

    /// A signal that sends each element of `values` in order, then completes.
    ///
    /// The sequence is iterated anew at each start; a disposal stops the iteration before the next element.
    @inlinable
    public init<Values: Sequence & Sendable>(values: Values) where Values.Element == Value {
        self.init(trusted: { observer, lifetime in
            for value in values {
                guard !lifetime.hasEnded else {
                    observer.sendInterrupted()
                    return
                }
                observer.valueAction(value)
            }
            observer.sendCompleted()
        })
    }

    /// A signal that completes at once without sending a value.
    @inlinable
    public static var empty: Signal {
        Signal(body: .empty)
    }

    /// A signal that never sends anything; it ends only by being disposed (then it sends `interrupted`).
    @inlinable
    public static var never: Signal {
        Signal { _, _ in }
    }

    /// A signal that runs `producer` on `scheduler` each time it is started (RAC's
    /// `startLazilyWithScheduler:block:`, but cold: every start runs the block again).
    ///
    /// Typical use is work that must happen on a context's queue:
    ///
    /// ```swift
    /// Signal<[ObjectID], StoreError>.lazy(on: context.scheduler) { observer, lifetime in
    ///     observer.send(value: context.fetchIDs(request))
    ///     observer.sendCompleted()
    /// }
    /// ```
    public static func lazy(
        on scheduler: any Scheduler,
        _ producer: @escaping @Sendable (_ observer: Observer<Value, Failure>, _ lifetime: Lifetime) -> Void
    ) -> Signal {
        Signal(producer).start(on: scheduler)
    }

    // MARK: - Running

    /// Runs the body into `observer` within `lifetime`. The caller owns the lifetime.
    @inlinable
    func run(_ observer: Observer<Value, Failure>, _ lifetime: Lifetime) {
        guard !lifetime.hasEnded else {
            observer.sendInterrupted()
            return
        }
        switch body {
        case .value(let value):
            observer.valueAction(value)
            observer.sendCompleted()
        case .failure(let error):
            observer.send(error: error)
        case .empty:
            observer.sendCompleted()
        case .producer(let producer):
            producer(observer, lifetime)
        case .gated(let producer):
            let gate = EventGate(observer)
            lifetime += gate
            producer(gate.observer, lifetime)
        }
    }

    /// Starts this signal as a nested run inside `parent`: it gets its own lifetime, which ends when the run
    /// terminates (before the terminal event is passed on) or when `parent` ends (which interrupts the run).
    ///
    /// - Returns: the nested run's disposable (disposing it interrupts the run).
    @inlinable
    @discardableResult
    func startNested(in parent: Lifetime, _ observer: Observer<Value, Failure>) -> CompositeDisposable {
        let child = CompositeDisposable()
        let key = parent.disposables.insert(.disposable(child))
        let parentDisposables = parent.disposables
        let wrapped = Observer<Value, Failure>(
            value: observer.valueAction,
            termination: { termination in
                child.dispose()
                if let key { parentDisposables.remove(key) }
                observer.terminationAction(termination)
            })
        run(wrapped, Lifetime(child))
        return child
    }

    /// A signal with the same delivery schedulers as this one, for operators that keep the event flow.
    @inlinable
    func lifted<NewValue, NewFailure>(
        _ transform: @escaping @Sendable (Observer<NewValue, NewFailure>, Lifetime) -> Observer<Value, Failure>
    ) -> Signal<NewValue, NewFailure> {
        Signal<NewValue, NewFailure>(deliverySchedulers: deliverySchedulers) { observer, lifetime in
            self.run(transform(observer, lifetime), lifetime)
        }
    }
}
