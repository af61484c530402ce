import ContextBus
import Dispatch

/// Runs `work` (async) and blocks the calling thread until it is done: for the demo's own thread, which is neither a
/// context's queue nor the cooperative pool, to connect a `BusClient`.
func waitFor<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) throws -> T {
    let outcome = Locked<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let result: Result<T, any Error>
        do {
            result = .success(try await work())
        } catch {
            result = .failure(error)
        }
        outcome.withLock { $0 = result }
        done.signal()
    }
    done.wait()
    return try outcome.withLock { $0 }!.get()
}

/// What went wrong in a part of the demo.
struct DemoFailure: Error, CustomStringConvertible {
    var description: String
}
