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
