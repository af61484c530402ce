import Dispatch
@preconcurrency import Glibc
import Shared

/// The termination signals of a service (`SIGTERM`, `SIGINT`), delivered as ordinary calls on a
/// dispatch queue instead of an asynchronous signal handler.
///
/// Making one ignores the signals' default action (termination) and watches them with
/// `DispatchSource` signal sources, so the handler may do anything: stop a server, flush, close
/// a store, `exit(0)`. Keep the value alive for as long as the signals should be handled;
/// `cancel()` stops watching (the signals stay ignored).
///
/// Call `blockInEveryNewThread()` at the very start of `main`, before any thread exists: a
/// thread that does not block the signals would take (and, the action being "ignore", lose)
/// them. Make the `ServiceSignals` before anyone can know the process is there (before binding
/// a socket): making it sets the action to "ignore", which discards a signal already pending.
/// Do not park the main thread in `dispatchMain()`, which waits in `sigsuspend` with an empty
/// mask and so takes the signals itself; wait on a semaphore instead. Tested through the services' SIGTERM integration tests (a test runner process already
/// has threads that do not block them).
///
/// ```swift
/// let signals = ServiceSignals(queue: .main) { signal in
///     service.stop()
///     exit(0)
/// }
/// ```
public final class ServiceSignals: Sendable {
    /// `SIGTERM` (15): what `kill` and service managers send.
    public static let terminate: Int32 = 15
    /// `SIGINT` (2): Control-C.
    public static let interrupt: Int32 = 2

    private let sources: Locked<[any DispatchSourceSignal]>

    /// Blocks `signals` in the calling thread, so that every thread it starts afterwards inherits
    /// the mask. Call it first thing in `main`, before anything has started a thread.
    ///
    /// Why: on Linux, libdispatch reads signals through a `signalfd`, which only sees a signal
    /// that stays pending because no thread takes it. A process-directed signal goes to any
    /// thread that does not block it, where its disposition applies (ignored, here) and the
    /// source never sees it. Blocked in every thread, it stays pending until the source reads it.
    public static func blockInEveryNewThread(_ signals: [Int32] = [terminate, interrupt]) {
        var set = sigset_t()
        sigemptyset(&set)
        for number in signals { sigaddset(&set, number) }
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// Starts handling `signals`, calling `handler` with the signal number on `queue` each time
    /// one arrives.
    public init(
        signals: [Int32] = [ServiceSignals.terminate, ServiceSignals.interrupt], queue: DispatchQueue,
        handler: @escaping @Sendable (Int32) -> Void
    ) {
        var sources: [any DispatchSourceSignal] = []
        for number in signals {
            _ = signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { handler(number) }
            source.resume()
            sources.append(source)
        }
        self.sources = Locked(sources)
    }

    /// Stops watching the signals.
    public func cancel() {
        let sources = self.sources.withLock { sources in
            defer { sources = [] }
            return sources
        }
        for source in sources { source.cancel() }
    }

    deinit { cancel() }
}
