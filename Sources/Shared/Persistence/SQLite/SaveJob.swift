import ContextBusObjectGraph
import ContextBusSupport
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

    func finish(_ result: Result<SaveResult, any Error>) {
        if let completion {
            completion(result)
            return
        }
        outcome.withLock { $0 = result }
        done.signal()
    }

    func wait() -> Result<SaveResult, any Error> {
        done.wait()
        return outcome.withLock { $0! }
    }
}
