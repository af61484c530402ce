@preconcurrency import Glibc

/// A value protected by a `pthread_mutex_t`: the reactive core's lock.
///
/// Why not `Synchronization.Mutex`: on Linux its contended path (`_lockSlow`/`_unlockSlow`, a
/// priority-inheriting futex inside the uninstrumented Synchronization library) is invisible to
/// ThreadSanitizer, which then reports false races on every *contended* `Mutex` (checked with Swift 6.3.1).
/// pthread mutexes are intercepted by ThreadSanitizer, so `swift test --sanitize=thread` stays meaningful.
///
/// `@unchecked Sendable` because `value` is only ever accessed inside `withLock`, under the mutex.
@usableFromInline
final class Locked<Value>: @unchecked Sendable {
    @usableFromInline
    let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// Only accessed under `mutex`, so the dynamic exclusivity check would be pure overhead.
    @usableFromInline
    @exclusivity(unchecked)
    var value: Value

    @inlinable
    init(_ value: Value) {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        self.value = value
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value. Never call out to user code from `body`.
    @inlinable
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
