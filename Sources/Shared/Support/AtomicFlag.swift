import Synchronization

/// A flag that can be set once, from any thread: for "exactly once" cleanup.
package final class AtomicFlag: Sendable {
    private let value = Atomic<Bool>(false)

    package init() {}

    /// Sets the flag; returns `true` only for the call that set it.
    package func setOnce() -> Bool {
        value.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
    }

    package var isSet: Bool { value.load(ordering: .acquiring) }
}
