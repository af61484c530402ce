@preconcurrency import Glibc
import Dispatch

/// Runs a shutdown handler once when the process is asked to stop (SIGTERM from systemd or
/// docker, SIGINT from Ctrl-C), then exits: how the executables save their root context before
/// they go.
///
/// ```swift
/// let stack = ContextStack(store: store)
/// ShutdownSignals.install { signal in
///     do { try stack.shutdown() } catch { log("final save failed: \(error)") }
/// }                                   // then exit(0)
/// dispatchMain()
/// ```
///
/// The signals are ignored by the default disposition and read from a `DispatchSourceSignal`,
/// so the handler runs on an ordinary dispatch queue (it may take locks, save, log). The first
/// signal runs the handler, then the process exits with status 0 (unless `exitsAfterHandler` is
/// false); a second signal while the handler is still running ends the process at once with
/// status 128 + the signal number, so a stuck save can still be interrupted. Install once per
/// process.
public enum ShutdownSignals {
    /// Starts handling `signals`.
    ///
    /// - Parameters:
    ///   - signals: the signals that mean "stop"; SIGTERM and SIGINT by default.
    ///   - exitsAfterHandler: whether to `exit(0)` when the handler returns.
    ///   - handler: called once, with the signal received, on a private serial queue.
    /// - Returns: the installation; `cancel()` stops handling and restores the default actions.
    @discardableResult
    public static func install(
        _ signals: [Int32] = [SIGTERM, SIGINT], exitsAfterHandler: Bool = true,
        handler: @escaping @Sendable (Int32) -> Void
    ) -> ShutdownSignalHandler {
        ShutdownSignalHandler(signals: signals, exitsAfterHandler: exitsAfterHandler, handler: handler)
    }
}

/// An installation made by `ShutdownSignals.install`.
public final class ShutdownSignalHandler: Sendable {
    private struct State {
        var sources: [DispatchSourceBox] = []
        var received: Int32?
        var isCancelled = false
    }

    /// The signals handled.
    public let signals: [Int32]
    private let state = Locked(State())
    private let queue = DispatchQueue(label: "ContextBus.ShutdownSignals")

    init(signals: [Int32], exitsAfterHandler: Bool, handler: @escaping @Sendable (Int32) -> Void) {
        self.signals = signals
        var sources: [any DispatchSourceSignal] = []
        for number in signals {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { [weak self] in
                self?.received(number, exitsAfterHandler: exitsAfterHandler, handler: handler)
            }
            sources.append(source)
        }
        // The sources are handed over before they can fire.
        let boxes = sources.map(DispatchSourceBox.init)
        state.withLock { $0.sources = boxes }
        for box in boxes { box.source.resume() }
    }

    /// The first signal received, if any.
    public var receivedSignal: Int32? { state.withLock { $0.received } }

    /// Stops handling the signals and restores their default actions.
    public func cancel() {
        let boxes = state.withLock { state -> [DispatchSourceBox] in
            state.isCancelled = true
            defer { state.sources = [] }
            return state.sources
        }
        for box in boxes { box.source.cancel() }
        for number in signals { signal(number, SIG_DFL) }
    }

    private func received(_ number: Int32, exitsAfterHandler: Bool, handler: @escaping @Sendable (Int32) -> Void) {
        let isFirst = state.withLock { state -> Bool in
            guard !state.isCancelled, state.received == nil else { return false }
            state.received = number
            return true
        }
        guard isFirst else { return }
        // A second signal while the handler runs forces the exit.
        let forced = DispatchQueue(label: "ContextBus.ShutdownSignals.forced")
        let forcing = signals.map { signalNumber -> any DispatchSourceSignal in
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: forced)
            source.setEventHandler { _exit(128 + signalNumber) }
            source.resume()
            return source
        }
        handler(number)
        for source in forcing { source.cancel() }
        if exitsAfterHandler { exit(0) }
    }
}
