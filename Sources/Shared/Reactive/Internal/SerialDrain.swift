import ContextBusSupport
import Synchronization

/// Runs submitted inputs one at a time, in submission order per thread, without blocking and without recursion.
///
/// This is the queue-drain ("emitter loop") serialiser: the thread that submits into an idle drain becomes its
/// *emitter* and handles the input at once; an input submitted while another thread (or the emitter itself,
/// recursively) is handling one is queued, and the emitter handles it before it lets go. So handlers never run
/// concurrently and never nest, and a submitter never waits for a lock held across a handler.
///
/// Cost of an uncontended, non-recursive submission: two atomic compare-exchanges, no lock, no allocation.
///
/// The handler is passed on every call (all callers of one drain pass the same logic), so the drain stores no
/// closure and creates no retain cycle with its owner. State that only the handler touches needs no lock:
/// the `acquiring`/`releasing` orderings on `pending` order one emitter's writes before the next emitter's reads.
@usableFromInline
final class SerialDrain<Input: Sendable>: Sendable {
    /// Number of inputs submitted but not yet handled; non-zero while some thread is the emitter.
    @usableFromInline
    let pending = Atomic<Int>(0)
    @usableFromInline
    let queue = Locked(RingBuffer<Input>())

    @inlinable
    init() {}

    @inlinable
    func submit(_ input: Input, _ handler: (Input) -> Void) {
        if pending.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged {
            handler(input)
            if pending.compareExchange(expected: 1, desired: 0, ordering: .releasing).exchanged { return }
            drain(missed: 1, handler)
        } else {
            queue.withLock { $0.append(input) }
            if pending.wrappingAdd(1, ordering: .acquiringAndReleasing).oldValue == 0 {
                drain(missed: 1, handler)
            }
        }
    }

    /// Runs `body` at once, as the emitter, when the drain is idle, then handles what was submitted meanwhile;
    /// returns `false` (nothing run) when another input is being handled. For an input that costs more to build and
    /// move through `submit` than to act on (`Flattener`'s inner producers); the caller submits it when busy.
    @inlinable
    func runIfIdle(_ body: () -> Void, _ handler: (Input) -> Void) -> Bool {
        guard pending.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged else { return false }
        body()
        if pending.compareExchange(expected: 1, desired: 0, ordering: .releasing).exchanged { return true }
        drain(missed: 1, handler)
        return true
    }

    @inlinable
    func drain(missed: Int, _ handler: (Input) -> Void) {
        var missed = missed
        while true {
            while let input = queue.withLock({ $0.popFirst() }) {
                handler(input)
            }
            missed = pending.wrappingSubtract(missed, ordering: .acquiringAndReleasing).newValue
            if missed == 0 { return }
        }
    }
}
