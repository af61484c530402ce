import Dispatch

@testable import ContextBusSupport

/// Runs blocking `work` (reading a child's output, waiting for it to exit) on a thread of its own and awaits it.
///
/// The whole suite runs in one process on the cooperative pool, which has one thread per core; a test that blocks
/// one of them with `poll` or `waitpid` starves every other test, including the tasks its own process waits for.
func offThePool<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result {
    try await withLockedThrowingContinuation { continuation in
        DispatchQueue(label: "devicesvc-tests.blocking").async {
            continuation.resume(with: Swift.Result { try work() })
        }
    }
}

/// `offThePool` for work that cannot fail.
func offThePool(_ work: @escaping @Sendable () -> Void) async {
    await withLockedContinuation { continuation in
        DispatchQueue(label: "devicesvc-tests.blocking").async {
            work()
            continuation.resume()
        }
    }
}
