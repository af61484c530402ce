import Synchronization

/// A flag that is set once, from any thread: for "exactly once" completions.
final class OnceFlag: Sendable {
    private let value = Atomic<Bool>(false)

    /// Sets the flag; `true` only for the call that set it.
    func setOnce() -> Bool {
        !value.exchange(true, ordering: .acquiringAndReleasing)
    }

    var isSet: Bool { value.load(ordering: .acquiring) }
}
