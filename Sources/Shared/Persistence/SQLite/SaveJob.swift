import ContextBusObjectGraph
import ContextBusSupport
import Dispatch

/// One save waiting for the writer: the request, then its answer (to a waiting thread, or to a
/// completion handler).
final class SaveJob: Sendable {
    let request: SaveRequest
    private let answer: Answer

    /// Where the outcome goes. A save queued with a completion (every save of storesvc) makes no semaphore and no
    /// lock: they would be allocated and torn down for nothing, once per save.
    private enum Answer: Sendable {
        case completion(@Sendable (Result<SaveResult, any Error>) -> Void)
        case waiter(Waiter)
    }

    /// A thread blocked in `wait()` until the outcome is in.
    private final class Waiter: Sendable {
        let done = DispatchSemaphore(value: 0)
        let outcome = Locked<Result<SaveResult, any Error>?>(nil)
    }

    init(request: SaveRequest, completion: (@Sendable (Result<SaveResult, any Error>) -> Void)? = nil) {
        self.request = request
        answer = completion.map(Answer.completion) ?? .waiter(Waiter())
    }

    func finish(_ result: Result<SaveResult, any Error>) {
        switch answer {
        case .completion(let completion):
            completion(result)
        case .waiter(let waiter):
            waiter.outcome.withLock { $0 = result }
            waiter.done.signal()
        }
    }

    /// Blocks until `finish`; only for a job made without a completion.
    func wait() -> Result<SaveResult, any Error> {
        guard case .waiter(let waiter) = answer else {
            preconditionFailure("a save queued with a completion is not waited for")
        }
        waiter.done.wait()
        return waiter.outcome.withLock { $0! }
    }
}
