// The one platform import block of ContextBusSupport. Linux (Glibc) only: we add no branches we cannot test.
// The other files that call C directly import Glibc plainly, and are the module's edge: `Locked.swift` (the pthread
// mutex) and `ShutdownSignals.swift` (`sigaction`, the self-pipe). The other modules of the package call the
// helpers below instead of looping on `errno` themselves.
#if canImport(Glibc)
@preconcurrency import Glibc
#else
#error("ContextBus supports Linux (Glibc) only")
#endif

/// Runs a system call, again while it fails with `EINTR`: the one place in the package that retries interrupted
/// calls (STYLE.md, "EINTR is retried in exactly one helper").
///
/// ```swift
/// let count = retryingInterrupts { recv(fd, buffer, length, 0) }
/// if count == -1 { throw SystemError(errno: errno, operation: "recv") }
/// ```
///
/// - Parameter call: The call; it returns `-1` and sets `errno` on failure, as most of libc does. Not for calls that
///   return their error number (`pthread_*`), and never for `close`, which Linux completes even when it reports
///   `EINTR`.
/// - Returns: The call's result: what it returned, or `-1` with `errno` still set by the failure that was not
///   `EINTR`.
@inline(__always)
package func retryingInterrupts<Result: BinaryInteger>(_ call: () -> Result) -> Result {
    while true {
        let result = call()
        if result == -1 && errno == EINTR { continue }
        return result
    }
}

/// The calling thread, as the C library knows it.
package enum CurrentThread {
    /// An id of the calling thread (`pthread_self`): the same on every call from one thread, different for two
    /// threads that are alive at once.
    package static var id: UInt { UInt(pthread_self()) }

    /// Blocks the calling thread for at least `nanoseconds` (none when it is not positive); a signal handled
    /// meanwhile does not cut the sleep short.
    package static func sleep(nanoseconds: Int64) {
        guard nanoseconds > 0 else { return }
        var request = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
        var remaining = timespec()
        _ = retryingInterrupts {
            let result = nanosleep(&request, &remaining)
            request = remaining  // an interrupted sleep goes on for what was left of it
            return result
        }
    }
}
