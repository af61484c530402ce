import Dispatch
@preconcurrency import Glibc
import Synchronization

/// Runs a shutdown handler once when the process is asked to stop (SIGTERM from systemd or
/// docker, SIGINT from Ctrl-C), then exits: how the executables save their root context before
/// they go.
///
/// ```swift
/// let stack = ContextStack(store: store)
/// ShutdownSignals.install { signal in
///     do { try stack.shutdown() } catch { log("final save failed: \(error)") }
/// }                                   // then exit(0)
/// DispatchSemaphore(value: 0).wait()  // the main thread lives until then
/// ```
///
/// The first signal runs the handler on a private serial queue (so it may take locks, save and
/// log), then the process exits with status 0 (unless `exitsAfterHandler` is false). A further
/// signal while the handler is still running ends the process at once with status 128 + the
/// signal number, so a stuck save can still be interrupted. Install once per process.
///
/// How: a `sigaction` handler writes the signal number to a pipe (the self-pipe trick; that and
/// `_exit` are all it does, both async-signal-safe) and a `DispatchSourceRead` on the pipe runs
/// the Swift handler. Not a `DispatchSourceSignal`: on Linux those read a `signalfd`, which only
/// sees a signal that every thread blocks, and a process that already runs threads (the Swift
/// concurrency pool, a test runner) cannot block it everywhere, so an ignored signal would be
/// discarded by whichever thread the kernel picks.
public enum ShutdownSignals {
    /// Starts handling `signals`, and unblocks them in the calling thread: call it from the main thread, which
    /// must live as long as the process, blocked (on a semaphore, say). Not in `dispatchMain()`: on Linux that ends
    /// the main thread with `pthread_exit`, which leaves the thread's stack behind with the address sanitizer's
    /// marks of the frames it abandoned, and a signal the kernel then delivers to that thread runs its handler on
    /// top of them (devicesvc, under ASan, aborted at SIGTERM now and then with a "dynamic-stack-buffer-overflow"
    /// in the handler).
    ///
    /// - Parameters:
    ///   - signals: the signals that mean "stop"; SIGTERM and SIGINT by default. A SIGINT that is ignored
    ///     when `install` runs (inherited from the parent, as shells do for background jobs) stays ignored.
    ///   - exitsAfterHandler: whether to `exit(0)` when the handler returns.
    ///   - handler: called once, with the signal received, on a private serial queue.
    /// - Returns: the installation; `cancel()` stops handling and restores the default actions.
    @discardableResult
    public static func install(
        _ signals: [Int32] = [SIGTERM, SIGINT], exitsAfterHandler: Bool = true,
        handler: @escaping @Sendable (Int32) -> Void
    ) -> ShutdownSignalHandler {
        let installation = ShutdownSignalHandler(
            signals: signals, exitsAfterHandler: exitsAfterHandler, handler: handler)
        SignalPipe.shared.add(installation)
        // A process started by one that blocks the signals (a test runner, some supervisors) inherits the mask,
        // and a signal every thread blocks is never delivered: this thread (call from `main`) takes them.
        var set = sigset_t()
        sigemptyset(&set)
        for number in signals { sigaddset(&set, number) }
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        return installation
    }
}

/// An installation made by `ShutdownSignals.install`.
public final class ShutdownSignalHandler: Sendable {
    private struct State {
        var received: Int32?
        var isCancelled = false
    }

    /// The signals handled.
    public let signals: [Int32]
    private let exitsAfterHandler: Bool
    private let handler: @Sendable (Int32) -> Void
    private let state = Locked(State())

    init(signals: [Int32], exitsAfterHandler: Bool, handler: @escaping @Sendable (Int32) -> Void) {
        self.signals = signals
        self.exitsAfterHandler = exitsAfterHandler
        self.handler = handler
    }

    /// The first signal received, if any.
    public var receivedSignal: Int32? { state.withLock { $0.received } }

    /// Whether some installation's handler is running now: a signal that arrives meanwhile ends the process with
    /// status 128 + its number (tests wait for a handler to return before they signal again).
    static var isRunningAHandler: Bool { SignalPipe.handlerIsRunning.load(ordering: .sequentiallyConsistent) }

    /// Stops handling the signals; those no other installation handles get their default
    /// actions back.
    public func cancel() {
        let wasActive = state.withLock { state -> Bool in
            defer { state.isCancelled = true }
            return !state.isCancelled
        }
        if wasActive { SignalPipe.shared.remove(self) }
    }

    /// A signal arrived (on the pipe's queue): the first one runs the handler.
    func receive(_ number: Int32) {
        guard signals.contains(number) else { return }
        let isFirst = state.withLock { state -> Bool in
            guard !state.isCancelled, state.received == nil else { return false }
            state.received = number
            return true
        }
        guard isFirst else { return }
        SignalPipe.handlerIsRunning.store(true, ordering: .sequentiallyConsistent)
        handler(number)
        if exitsAfterHandler { exit(0) }
        SignalPipe.handlerIsRunning.store(false, ordering: .sequentiallyConsistent)
    }
}

/// The process-wide pipe the signal handler writes to, and the installations it feeds.
private final class SignalPipe: Sendable {
    static let shared = SignalPipe()
    /// Set while a shutdown handler runs: a signal then forces the exit.
    static let handlerIsRunning = Atomic<Bool>(false)

    let readEnd: Int32
    let writeEnd: Int32
    private let installations = Locked<[ShutdownSignalHandler]>([])
    private let queue = DispatchQueue(label: "ContextBus.ShutdownSignals")
    private let reader: DispatchSourceBox

    private init() {
        var ends: [Int32] = [-1, -1]
        let status = pipe(&ends)
        precondition(status == 0, "pipe failed: errno \(errno)")
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        readEnd = ends[0]
        writeEnd = ends[1]
        let source = DispatchSource.makeReadSource(fileDescriptor: ends[0], queue: queue)
        reader = DispatchSourceBox(source)
        source.setEventHandler { [readEnd = ends[0]] in
            var bytes = [UInt8](repeating: 0, count: 64)
            let count = retryingInterrupts { read(readEnd, &bytes, bytes.count) }
            guard count > 0 else { return }
            let current = SignalPipe.shared.installations.withLock { $0 }
            for byte in bytes.prefix(count) {
                for installation in current { installation.receive(Int32(byte)) }
            }
        }
        source.resume()
    }

    func add(_ installation: ShutdownSignalHandler) {
        _ = Self.handlerIsRunning.load(ordering: .relaxed)  // initialise before a handler can read it
        installations.withLock { $0.append(installation) }
        for number in installation.signals {
            // The shell convention: a SIGINT ignored at start (a background job of a non-interactive shell,
            // `nohup`) stays ignored, so Ctrl-C in the terminal does not stop it behind its parent's back.
            if number == SIGINT && Self.isIgnored(number) { continue }
            var action = sigaction()
            action.__sigaction_handler.sa_handler = signalPipeHandler
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            sigaction(number, &action, nil)
        }
    }

    /// Whether `number`'s action is currently "ignore" (`SIG_IGN`).
    private static func isIgnored(_ number: Int32) -> Bool {
        var current = sigaction()
        guard sigaction(number, nil, &current) == 0, let handler = current.__sigaction_handler.sa_handler else {
            return false
        }
        return unsafeBitCast(handler, to: Int.self) == 1  // SIG_IGN is the handler address 1
    }

    func remove(_ installation: ShutdownSignalHandler) {
        let stillHandled = installations.withLock { list -> Set<Int32> in
            list.removeAll { $0 === installation }
            return Set(list.flatMap(\.signals))
        }
        for number in installation.signals where !stillHandled.contains(number) {
            signal(number, SIG_DFL)
        }
    }
}

/// The `sigaction` handler: async-signal-safe only (an atomic load, `_exit`, `write`).
private let signalPipeHandler: @convention(c) (Int32) -> Void = { number in
    if SignalPipe.handlerIsRunning.load(ordering: .sequentiallyConsistent) { _exit(128 + number) }
    var byte = UInt8(truncatingIfNeeded: number)
    _ = write(SignalPipe.shared.writeEnd, &byte, 1)
}
