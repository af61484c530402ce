import ContextBusSupport
import Dispatch

/// A one-shot timer on a dispatch queue that really cancels: disposing it cancels the dispatch source, which
/// releases the action at once instead of keeping it until the deadline.
final class DispatchTimer: Disposable {
    /// `DispatchSourceTimer` is not marked `Sendable`, but dispatch sources are thread-safe: `cancel()` may be
    /// called from any thread. It is only touched through `cancel()` after `init`.
    private nonisolated(unsafe) let source: any DispatchSourceTimer
    private let disposed = AtomicFlag()

    /// Starts a timer that runs `action` on `queue` at `deadline` unless disposed first.
    init(deadline: DispatchTime, queue: DispatchQueue, action: @escaping @Sendable () -> Void) {
        source = DispatchSource.makeTimerSource(queue: queue)
        source.schedule(deadline: deadline, repeating: .never)
        source.setEventHandler { [disposed, source] in
            guard disposed.setOnce() else { return }
            source.cancel()
            action()
        }
        source.resume()
    }

    var isDisposed: Bool { disposed.isSet }

    func dispose() {
        guard disposed.setOnce() else { return }
        source.cancel()
    }
}
