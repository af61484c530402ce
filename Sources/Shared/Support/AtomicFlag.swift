import Synchronization

/// A flag that can be set once, from any thread: for "exactly once" cleanup.
final class AtomicFlag: Sendable {
    private let value = Atomic<Bool>(false)

    /// Sets the flag; returns `true` only for the call that set it.
    func setOnce() -> Bool {
        value.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
    }

    var isSet: Bool { value.load(ordering: .acquiring) }
}
