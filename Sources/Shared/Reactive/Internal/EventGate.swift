import Synchronization

/// The guard between a producer (or any source of events from several threads) and its downstream observer.
///
/// It enforces the observer contract of docs/ReactiveContracts.md:
/// - after the first terminal event, everything is dropped (a misbehaving producer cannot break it);
/// - events sent concurrently or recursively are serialised by a `SerialDrain`: delivered one at a time,
///   never nested, in order per sending thread;
/// - disposing the gate interrupts: `interrupted` is delivered unless a terminal event was already accepted.
///   If another event is being delivered at that moment, the interruption follows it, on the delivering thread.
@usableFromInline
final class EventGate<Value: Sendable, Failure: Error>: Disposable {
    @usableFromInline
    let downstream: Observer<Value, Failure>
    @usableFromInline
    let drain = SerialDrain<Event<Value, Failure>>()
    /// Whether a terminal event has been accepted (it may still be waiting in the drain).
    @usableFromInline
    let closed = Atomic<Bool>(false)
    /// Whether a terminal event has been delivered. Only touched by the drain's current emitter.
    @usableFromInline
    @exclusivity(unchecked)
    nonisolated(unsafe) var delivered = false

    @inlinable
    init(_ downstream: Observer<Value, Failure>) {
        self.downstream = downstream
    }

    /// An observer that sends into this gate.
    @inlinable
    var observer: Observer<Value, Failure> {
        Observer(value: { [self] in send(value: $0) }, termination: { [self] in send($0) })
    }

    @inlinable
    var isDisposed: Bool { closed.load(ordering: .acquiring) }

    @inlinable
    func send(value: Value) {
        guard !closed.load(ordering: .relaxed) else { return }
        drain.submit(.value(value), deliver)
    }

    @inlinable
    func send(_ termination: Termination<Failure>) {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        drain.submit(termination.event(), deliver)
    }

    @inlinable
    func dispose() {
        send(.interrupted)
    }

    @inlinable
    func deliver(_ event: Event<Value, Failure>) {
        guard !delivered else { return }
        switch event {
        case .value(let value):
            downstream.valueAction(value)
        case .failed(let error):
            delivered = true
            downstream.terminationAction(.failed(error))
        case .completed:
            delivered = true
            downstream.terminationAction(.completed)
        case .interrupted:
            delivered = true
            downstream.terminationAction(.interrupted)
        }
    }
}
