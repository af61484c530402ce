@preconcurrency import Glibc

/// A value protected by a `pthread_mutex_t`: the lock every ContextBus type uses for shared state.
///
/// Why not `Synchronization.Mutex`: on Linux it locks with raw `futex` calls, which the thread
/// sanitizer does not see, so every contended `withLock` is reported as a data race and
/// `swift test --sanitize=thread` cannot be clean (reproduced with Swift 6.3.1: four threads
/// appending to a `Mutex<[Int]>`). `pthread_mutex_lock` is intercepted by the sanitizer, so
/// real races stay visible and correct locking stays quiet. The API mirrors `Mutex`.
///
/// ```swift
/// private let state = Locked(State())
/// state.withLock { $0.count += 1 }
/// ```
public final class Locked<State>: @unchecked Sendable {
    // @unchecked Sendable: `state` is only read or written inside `withLock`, between
    // `pthread_mutex_lock` and `pthread_mutex_unlock` on `mutex`; `withLock` takes `sending`
    // closures and results exactly like `Mutex`, so no non-Sendable state escapes the lock.
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// Only accessed under `mutex`, so the dynamic exclusivity check would be pure overhead.
    @usableFromInline @exclusivity(unchecked) var state: State

    /// Makes a lock around `initialState`.
    @inlinable
    public init(_ initialState: sending State) {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed: \(status)")
        state = initialState
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the state.
    ///
    /// Never call out to observers or other locks' owners from `body`: copy what you need,
    /// return it, and act after the lock is released.
    @inlinable
    public func withLock<Result, Failure: Error>(
        _ body: (inout sending State) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }

    /// Runs `body` with exclusive access if the lock is free right now; otherwise returns `nil`.
    public func withLockIfAvailable<Result, Failure: Error>(
        _ body: (inout sending State) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result? {
        guard pthread_mutex_trylock(mutex) == 0 else { return nil }
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }
}
