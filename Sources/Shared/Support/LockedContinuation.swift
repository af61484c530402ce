/// A continuation that hands its result to the awaiting task through a `Locked` slot, so that the thread
/// sanitizer sees the hand-off. Use it like `CheckedContinuation`: resume exactly once (a second resume traps).
///
/// Why not `CheckedContinuation` alone: when a callback resumes a continuation before its task has suspended (the
/// answer came back on another thread while the task was still on its way to the `await`), the task picks the
/// result up in `swift_continuation_await` through an atomic load in `libswift_Concurrency`, which is not built
/// with the sanitizer and, on that path, tells it nothing (the runtime only annotates the path where the task was
/// suspended and is enqueued again). The hand-off is real, but TSan then reports everything the resuming thread
/// wrote before resuming — the result's storage, an object it built — as racing with the task's reads after the
/// `await`: `BusClient.connect` reading the client made on the loop thread, `DBusConnection.connect` reading the
/// `Hello` reply decoded on the reader thread. Here the resumer stores the result under a pthread mutex and the
/// task takes it out under the same mutex after the `await`; TSan models that unlock/lock pair whichever of
/// resume and suspend comes first.
///
/// ```swift
/// let reply = try await withLockedThrowingContinuation { continuation in
///     connection.call(message) { result in continuation.resume(with: result) }
/// }
/// ```
public struct LockedContinuation<T: Sendable, Failure: Error>: Sendable {
    private let slot: Locked<Result<T, Failure>?>
    private let continuation: CheckedContinuation<Void, Never>

    fileprivate init(slot: Locked<Result<T, Failure>?>, continuation: CheckedContinuation<Void, Never>) {
        self.slot = slot
        self.continuation = continuation
    }

    /// Resumes the awaiting task with `result`'s value or error.
    public func resume(with result: Result<T, Failure>) {
        slot.withLock { $0 = result }
        continuation.resume()
    }

    /// Resumes the awaiting task, which returns `value`.
    public func resume(returning value: T) {
        resume(with: .success(value))
    }

    /// Resumes the awaiting task, which throws `error`.
    public func resume(throwing error: Failure) {
        resume(with: .failure(error))
    }
}

extension LockedContinuation where T == Void {
    /// Resumes the awaiting task.
    public func resume() {
        resume(returning: ())
    }
}

/// Suspends the current task, calls `body` with a continuation for it, and returns what the continuation is
/// resumed with; `withCheckedContinuation` with a hand-off the thread sanitizer sees (see `LockedContinuation`).
public func withLockedContinuation<T: Sendable>(
    isolation: isolated (any Actor)? = #isolation, function: String = #function,
    _ body: (LockedContinuation<T, Never>) -> Void
) async -> T {
    await awaitLockedResult(isolation: isolation, function: function, body).get()
}

/// Suspends the current task, calls `body` with a continuation for it, and returns the value or throws the error
/// the continuation is resumed with; `withCheckedThrowingContinuation` with a hand-off the thread sanitizer sees
/// (see `LockedContinuation`).
public func withLockedThrowingContinuation<T: Sendable>(
    isolation: isolated (any Actor)? = #isolation, function: String = #function,
    _ body: (LockedContinuation<T, any Error>) -> Void
) async throws -> T {
    try await awaitLockedResult(isolation: isolation, function: function, body).get()
}

private func awaitLockedResult<T: Sendable, Failure: Error>(
    isolation: isolated (any Actor)?, function: String, _ body: (LockedContinuation<T, Failure>) -> Void
) async -> Result<T, Failure> {
    let slot = Locked<Result<T, Failure>?>(nil)
    await withCheckedContinuation(isolation: isolation, function: function) {
        (continuation: CheckedContinuation<Void, Never>) in
        body(LockedContinuation(slot: slot, continuation: continuation))
    }
    let result = slot.withLock { slot -> Result<T, Failure>? in
        defer { slot = nil }
        return slot
    }
    guard let result else { preconditionFailure("\(function): a LockedContinuation resumed without a result") }
    return result
}
