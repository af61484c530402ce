import ContextBusSupport
import Synchronization

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
                        // A constant inner value, and the producer of `Signal { observer, lifetime in … }`, travel without
                        // their `Signal` wrapper: cheaper to pass on.
                        let inner = transform(value)
                        switch inner.body {
                        case .value(let innerValue): flattener.submit(.outerValue(innerValue))
                        case .gated(let producer): flattener.submit(producer: producer)
                        default: flattener.submit(.outer(inner))
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
        /// An inner `Signal { observer, lifetime in … }`: its producer.
        case outerProducer(@Sendable (Observer<Value, Failure>, Lifetime) -> Void)
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
        /// Running inner signals and their runs (`Flattener+ActiveRuns.swift`).
        @usableFromInline
        var active = ActiveRuns()
        /// The run of the last inner `Signal { … }` that completed, with its observer, to start the next one with
        /// (`Flattener+Spare.swift`).
        @usableFromInline
        var spare: (run: FlattenedRun<Value, Failure>, observer: Observer<Value, Failure>)?
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
    /// The thread running an inner producer's start (`FlattenedRun.start`), 0 outside one
    /// (`Flattener+StartWindow.swift`).
    @usableFromInline
    let startingThread = Atomic<UInt>(0)
    /// What that producer sent meanwhile. Only touched by the drain's current emitter.
    @usableFromInline
    @exclusivity(unchecked)
    nonisolated(unsafe) var startWindow = StartWindow()

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

    /// Submits an inner `Signal { … }`'s producer: handled at once when the drain is idle, without making an `Input`.
    @inlinable
    func submit(producer: @escaping @Sendable (Observer<Value, Failure>, Lifetime) -> Void) {
        guard !drain.runIfIdle({ handle(producer: producer) }, handle) else { return }
        submit(.outerProducer(producer))
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
        case .outerProducer(let producer):
            handle(producer: producer)
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
            guard state.active.contains(id) else { return }
            downstream.valueAction(value)
        case .innerTerminated(.completed, let id):
            guard let run = state.active.remove(id) else { return }
            keepAsSpare(run)
            startWaiting()
            completeIfDone()
        case .innerTerminated(let termination, let id):
            guard state.active.contains(id) else { return }
            terminate(termination)
        }
    }

    /// An outer value's inner `Signal { … }`, by its producer.
    @inlinable
    func handle(producer: @escaping @Sendable (Observer<Value, Failure>, Lifetime) -> Void) {
        guard !state.isTerminated else { return }
        switch strategy {
        case .concat:
            if state.active.isEmpty && state.waiting.isEmpty {
                start(producer)
            } else {
                state.waiting.append(Signal(body: .gated(producer)))
            }
        case .merge:
            start(producer)
        case .latest:
            disposeActive()
            start(producer)
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
            state.active.insert(.nested(nil), as: id)
            // Events the inner signal sends synchronously queue up in the drain (this thread is its emitter)
            // and are handled after this returns: no recursion, however many inner signals finish at once.
            let run = inner.startNested(
                in: lifetime,
                Observer(
                    value: { [self] value in submit(.innerValue(value, id)) },
                    termination: { [self] termination in submit(.innerTerminated(termination, id)) }))
            state.active.setNestedRun(run, of: id)
        case .gated(let producer):
            start(producer)
        }
    }

    /// Starts the producer of an inner `Signal { observer, lifetime in … }`: this drain is its gate, and one object
    /// is its run, its observer's target and its lifetime's owner (`FlattenedRun`), reused from the inner run before
    /// it when nothing else holds that one (`Flattener+Spare.swift`).
    @inlinable
    func start(_ producer: @escaping @Sendable (Observer<Value, Failure>, Lifetime) -> Void) {
        let id = state.nextID
        state.nextID += 1
        let (run, observer) = takeSpare(for: id) ?? FlattenedRun.make(flattener: self, id: id)
        state.active.insert(.flattened(run, observer), as: id)
        // When the flatMap's run has ended, registering interrupts the inner one at once: it never starts.
        guard run.register() else { return }
        let started = run.start(producer, observer: observer)
        // What the producer sent during its start, handled as the drain would have handled it next. A completion
        // only leaves `active`: the loop of `startWaiting` goes on from there, without recursion (and a start for
        // an outer value has nothing waiting: the events were kept only while nothing else was queued).
        if let value = started.value, state.active.contains(id) { downstream.valueAction(value) }
        switch started.termination {
        case nil:
            break
        case .completed?:
            if let ended = state.active.remove(id) { keepAsSpare(ended) } else { run.unregister() }
        case let termination?:
            run.unregister()
            if state.active.contains(id) { terminate(termination) }
        }
    }

    @inlinable
    func disposeActive() {
        state.active.removeAll().disposeAll()
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
        dropSpare()
        downstream.sendCompleted()
    }

    @inlinable
    func terminate(_ termination: Termination<Failure>) {
        state.isTerminated = true
        dropSpare()
        let runs = state.active.removeAll()
        _ = state.waiting.removeAll()
        runs.disposeAll()
        downstream.terminationAction(termination)
    }
}
