extension Signal {
    /// Maps each value to a signal and flattens the inner signals into one, with `strategy`.
    ///
    /// The result completes when the outer signal and every inner signal it started have completed. Any
    /// failure (outer or inner) fails the result at once, interrupting whatever is still running and dropping
    /// inner signals not yet started. An interruption of the outer or of an inner signal interrupts the result.
    ///
    /// Inner signals that are constant (`Signal(value:)`, `Signal(error:)`, `.empty`) are handled without
    /// starting anything, and inner signals that finish synchronously are run in a loop, not by recursion.
    ///
    /// ```swift
    /// steps.flatMap(.concat) { step in device.run(step) }   // one step after the other; an error stops the chain
    /// ```
    @inlinable
    public func flatMap<NewValue: Sendable>(
        _ strategy: FlattenStrategy,
        _ transform: @escaping @Sendable (Value) -> Signal<NewValue, Failure>
    ) -> Signal<NewValue, Failure> {
        Signal<NewValue, Failure>(deliverySchedulers: deliverySchedulers) { observer, lifetime in
            let flattener = Flattener(strategy: strategy, downstream: observer, lifetime: lifetime)
            self.startNested(
                in: lifetime,
                Observer(
                    value: { value in
                        let inner = transform(value)
                        // A constant inner value travels without its `Signal` wrapper: cheaper to pass on.
                        if case .value(let innerValue) = inner.body {
                            flattener.submit(.outerValue(innerValue))
                        } else {
                            flattener.submit(.outer(inner))
                        }
                    },
                    termination: { flattener.submit(.outerTerminated($0)) }))
        }
    }
}

extension Signal {
    /// Flattens a signal of signals with `strategy`; the same as `flatMap(strategy) { $0 }`.
    @inlinable
    public func flatten<Inner: Sendable>(
        _ strategy: FlattenStrategy
    ) -> Signal<Inner, Failure> where Value == Signal<Inner, Failure> {
        flatMap(strategy) { $0 }
    }
}

/// The state machine behind `flatMap`. Every input (outer values and terminal events, inner events) goes
/// through one `SerialDrain`, so the state needs no lock and downstream events are serial.
@usableFromInline
final class Flattener<Value: Sendable, Failure: Error>: Sendable {
    @usableFromInline
    typealias InnerID = UInt64

    @usableFromInline
    enum Input: Sendable {
        case outer(Signal<Value, Failure>)
        /// An inner `Signal(value:)`, unwrapped.
        case outerValue(Value)
        case outerTerminated(Termination<Failure>)
        case innerValue(Value, InnerID)
        case innerTerminated(Termination<Failure>, InnerID)
    }

    @usableFromInline
    struct State {
        @usableFromInline
        var isTerminated = false
        @usableFromInline
        var isOuterCompleted = false
        @usableFromInline
        var nextID: InnerID = 0
        /// Running inner signals and their nested runs (the run is nil until `startNested` returns).
        @usableFromInline
        var active: [InnerID: CompositeDisposable?] = [:]
        /// `.concat` only: inner signals waiting for their turn.
        @usableFromInline
        var waiting = RingBuffer<Signal<Value, Failure>>()

        @inlinable
        init() {}
    }

    @usableFromInline
    let strategy: FlattenStrategy
    @usableFromInline
    let downstream: Observer<Value, Failure>
    @usableFromInline
    let lifetime: Lifetime
    @usableFromInline
    let drain = SerialDrain<Input>()
    /// Only touched by the drain's current emitter (see `SerialDrain`).
    @usableFromInline
    @exclusivity(unchecked)
    nonisolated(unsafe) var state = State()

    @inlinable
    init(strategy: FlattenStrategy, downstream: Observer<Value, Failure>, lifetime: Lifetime) {
        self.strategy = strategy
        self.downstream = downstream
        self.lifetime = lifetime
    }

    @inlinable
    func submit(_ input: Input) {
        drain.submit(input, handle)
    }

    @inlinable
    func handle(_ input: Input) {
        guard !state.isTerminated else { return }
        switch input {
        case .outer(let inner):
            switch strategy {
            case .concat:
                if state.active.isEmpty && state.waiting.isEmpty {
                    start(inner)
                } else {
                    state.waiting.append(inner)
                }
            case .merge:
                start(inner)
            case .latest:
                disposeActive()
                start(inner)
            }
        case .outerValue(let value):
            if strategy == .concat && !(state.active.isEmpty && state.waiting.isEmpty) {
                state.waiting.append(Signal(value: value))
            } else {
                if strategy == .latest { disposeActive() }
                downstream.valueAction(value)
            }
        case .outerTerminated(.completed):
            state.isOuterCompleted = true
            completeIfDone()
        case .outerTerminated(let termination):
            terminate(termination)
        case .innerValue(let value, let id):
            guard state.active[id] != nil else { return }
            downstream.valueAction(value)
        case .innerTerminated(.completed, let id):
            guard state.active.removeValue(forKey: id) != nil else { return }
            startWaiting()
            completeIfDone()
        case .innerTerminated(let termination, let id):
            guard state.active[id] != nil else { return }
            terminate(termination)
        }
    }

    /// Starts an inner signal; constant ones are delivered on the spot.
    @inlinable
    func start(_ inner: Signal<Value, Failure>) {
        switch inner.body {
        case .value(let value):
            downstream.valueAction(value)
        case .empty:
            break
        case .failure(let error):
            terminate(.failed(error))
        case .producer:
            let id = state.nextID
            state.nextID += 1
            state.active[id] = .some(nil)
            // Events the inner signal sends synchronously queue up in the drain (this thread is its emitter)
            // and are handled after this returns: no recursion, however many inner signals finish at once.
            let run = inner.startNested(
                in: lifetime,
                Observer(
                    value: { [self] value in submit(.innerValue(value, id)) },
                    termination: { [self] termination in submit(.innerTerminated(termination, id)) }))
            if state.active[id] != nil { state.active[id] = run }
        }
    }

    @inlinable
    func disposeActive() {
        let previous = state.active
        state.active.removeAll()
        for case let run? in previous.values { run.dispose() }
    }

    /// `.concat`: starts waiting inner signals while nothing runs (constant ones finish on the spot).
    @inlinable
    func startWaiting() {
        while state.active.isEmpty, !state.isTerminated, let next = state.waiting.popFirst() {
            start(next)
        }
    }

    @inlinable
    func completeIfDone() {
        guard state.isOuterCompleted, state.active.isEmpty, state.waiting.isEmpty, !state.isTerminated else {
            return
        }
        state.isTerminated = true
        downstream.sendCompleted()
    }

    @inlinable
    func terminate(_ termination: Termination<Failure>) {
        state.isTerminated = true
        let runs = state.active.values
        state.active.removeAll()
        _ = state.waiting.removeAll()
        for case let run? in runs { run.dispose() }
        downstream.terminationAction(termination)
    }
}
