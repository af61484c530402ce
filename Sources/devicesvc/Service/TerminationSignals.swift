import Dispatch
@preconcurrency import Glibc

/// SIGTERM and SIGINT delivered as a block on a queue instead of killing the process.
///
/// The signals are ignored for the default disposition and observed with dispatch sources, so the handler runs as
/// ordinary code (it may lock, allocate and wait). Keep the value alive for as long as the handler should run.
final class TerminationSignals {
    private let sources: [any DispatchSourceSignal]

    init(queue: DispatchQueue, handler: @escaping @Sendable (_ signal: String) -> Void) {
        sources = [(SIGTERM, "TERM"), (SIGINT, "INT")].map { number, name in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { handler(name) }
            source.resume()
            return source
        }
    }
}
