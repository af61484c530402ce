import Dispatch

/// One save waiting for the writer: the request, then its answer (to a waiting thread, or to a
/// completion handler).
final class SaveJob: Sendable {
    let request: SaveRequest
    private let done = DispatchSemaphore(value: 0)
    private let outcome = Locked<Result<SaveResult, any Error>?>(nil)
    private let completion: (@Sendable (Result<SaveResult, any Error>) -> Void)?

    init(request: SaveRequest, completion: (@Sendable (Result<SaveResult, any Error>) -> Void)? = nil) {
        self.request = request
        self.completion = completion
    }

    /// Answers the save: a completion handler is called with `result` at once; for a waiting
    /// thread `result` is recorded and `true` returned: the thread then waits for `wake()`.
    func answer(_ result: Result<SaveResult, any Error>) -> Bool {
        if let completion {
            completion(result)
            return false
        }
        outcome.withLock { $0 = result }
        return true
    }

    /// Wakes the thread waiting in `wait()` (after `answer(_:)`).
    func wake() {
        done.signal()
    }

    /// Answers the save and wakes its waiting thread, if any.
    func finish(_ result: Result<SaveResult, any Error>) {
        if answer(result) { wake() }
    }

    func wait() -> Result<SaveResult, any Error> {
        done.wait()
        return outcome.withLock { $0! }
    }
}
