import ContextBusSupport
import Synchronization

/// One thread running `epoll_wait`: it watches registered descriptors, runs timers and runs work handed to it
/// from other threads.
///
/// Everything a loop calls (readiness handlers, `execute` blocks, timers) runs on its thread, one at a time, so
/// state touched only from those callbacks needs no lock. epoll is used level-triggered: a handler may read only
/// part of what is available and will be called again, which keeps one busy connection from starving the others.
///
/// ```
///   other threads ──execute/schedule──▶ [tasks, timers] ──eventfd──┐
///                                                                   ▼
///   loop thread:  epoll_wait ─▶ readiness handlers ─▶ due timers ─▶ tasks ─▶ epoll_wait …
/// ```
///
/// `shutdown()` stops the loop, tells every registration's owner (`onLoopShutdown`) and joins the thread; the
/// epoll instance and its eventfd are closed when the last reference to the loop goes away.
public final class EventLoop: Sendable, CustomStringConvertible {
    /// Size of the buffer each loop reads into before handing bytes to a connection.
    package static let readBufferSize = 64 * 1024

    let epoll: Epoll
    private let state = Locked(State())
    private let threadID = Atomic<UInt>(0)
    private let thread = Locked<OSThread?>(nil)
    private let readBuffer = Locked([UInt8](repeating: 0, count: EventLoop.readBufferSize))
    private let name: String

    private struct Registration {
        var onReady: @Sendable (IOReadiness) -> Void
        var onLoopShutdown: @Sendable () -> Void
    }

    private enum Lifecycle { case running, stopping, stopped }

    private struct State {
        var lifecycle = Lifecycle.running
        var tasks: [@Sendable () -> Void] = []
        var timers = TimerQueue<ContinuousClock.Instant>()
        var registrations: [UInt64: Registration] = [:]
        var nextID: UInt64 = 1
    }

    /// Starts a loop on a new thread.
    ///
    /// - Parameter name: Appears in `description`, for logs.
    /// - Throws: `SystemError` when epoll, the eventfd or the thread cannot be created.
    public init(name: String = "event-loop") throws {
        self.name = name
        epoll = try Epoll()
        let spawned = try OSThread.spawn { [self] in run() }
        thread.withLock { $0 = spawned }
    }

    /// Whether the calling thread is this loop's thread.
    public var inEventLoop: Bool { threadID.load(ordering: .acquiring) == OSThread.currentID }

    public var description: String { "EventLoop(\(name))" }

    // MARK: - Work

    /// Runs `work` on the loop thread, after the current callback when called from the loop itself. Blocks from one
    /// thread run in the order they were submitted. Work submitted after `shutdown()` is dropped.
    public func execute(_ work: @escaping @Sendable () -> Void) {
        _ = submit(work)
    }

    /// Like `execute`, but reports whether the loop accepted the work (`false` once it has stopped).
    package func submit(_ work: @escaping @Sendable () -> Void) -> Bool {
        let onLoop = inEventLoop
        let (accepted, mustWake) = state.withLock { state -> (Bool, Bool) in
            guard state.lifecycle != .stopped else { return (false, false) }
            state.tasks.append(work)
            return (true, state.tasks.count == 1 && !onLoop)
        }
        // The loop only sleeps with an empty task list, so only the first task needs to wake it.
        if mustWake { epoll.wake() }
        return accepted
    }

    /// Runs `work` on the loop thread once `delay` has passed (with millisecond resolution, never early).
    ///
    /// - Returns: A handle whose `cancel()` stops the work if it has not started.
    @discardableResult
    public func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> ScheduledWork {
        schedule(at: .now + delay, work)
    }

    /// Runs `work` on the loop thread at `deadline` (never early). Timers due at the same time run in deadline
    /// order, then in the order they were scheduled.
    ///
    /// - Returns: A handle whose `cancel()` stops the work if it has not started.
    @discardableResult
    public func schedule(
        at deadline: ContinuousClock.Instant, _ work: @escaping @Sendable () -> Void
    ) -> ScheduledWork {
        let onLoop = inEventLoop
        let (id, mustWake) = state.withLock { state -> (UInt64, Bool) in
            let id = state.nextID
            state.nextID += 1
            guard state.lifecycle != .stopped else { return (id, false) }
            let isNext = state.timers.nextDeadline.map { deadline < $0 } ?? true
            state.timers.insert(.init(deadline: deadline, id: id, work: work))
            return (id, isNext && !onLoop)
        }
        if mustWake { epoll.wake() }
        return ScheduledWork(loop: self, id: id, deadline: deadline)
    }

    func cancelTimer(id: UInt64, deadline: ContinuousClock.Instant) -> Bool {
        state.withLock { $0.timers.remove(deadline: deadline, id: id) }
    }

    // MARK: - Registrations

    /// Watches `descriptor` for `interest`, calling `onReady` on the loop thread while it is ready.
    ///
    /// Readiness is level-triggered: `onReady` is called on every loop iteration for as long as the condition
    /// holds, so a handler that is not going to consume the data must change its interest.
    ///
    /// - Parameters:
    ///   - descriptor: The descriptor to watch; the caller keeps ownership and closes it after `cancel()`.
    ///   - interest: What to watch for (errors and hang-ups are always reported).
    ///   - onReady: Called on the loop thread with what was observed.
    ///   - onLoopShutdown: Called once on the loop thread if the loop shuts down while the registration is active,
    ///     so the owner can close the descriptor.
    /// - Returns: The registration, to change the interest or cancel.
    /// - Throws: `EventLoopError.shutDown` after `shutdown()`, or `SystemError` from `epoll_ctl`.
    package func register(
        _ descriptor: FileDescriptor, for interest: IOInterest,
        onReady: @escaping @Sendable (IOReadiness) -> Void,
        onLoopShutdown: @escaping @Sendable () -> Void = {}
    ) throws -> IORegistration {
        let id = try state.withLock { state throws -> UInt64 in
            guard state.lifecycle == .running else { throw EventLoopError.shutDown }
            let id = state.nextID
            state.nextID += 1
            state.registrations[id] = Registration(onReady: onReady, onLoopShutdown: onLoopShutdown)
            return id
        }
        do {
            try epoll.add(descriptor.rawValue, id: id, interest: interest)
        } catch {
            _ = state.withLock { $0.registrations.removeValue(forKey: id) }
            throw error
        }
        return IORegistration(loop: self, descriptor: descriptor, id: id)
    }

    func isRegistered(_ id: UInt64) -> Bool {
        state.withLock { $0.registrations[id] != nil }
    }

    func unregister(_ registration: IORegistration) {
        let wasActive = state.withLock { $0.registrations.removeValue(forKey: registration.id) != nil }
        if wasActive && !registration.descriptor.isClosed { epoll.remove(registration.descriptor.rawValue) }
    }

    /// Runs `body` with the loop's read buffer; called on the loop thread only, so the lock is never contended.
    func withReadBuffer<Result: Sendable>(_ body: (UnsafeMutableRawBufferPointer) -> Result) -> Result {
        readBuffer.withLock { buffer in buffer.withUnsafeMutableBytes { body($0) } }
    }

    // MARK: - Shutdown

    /// Stops the loop: pending `execute` blocks run, timers are dropped, every active registration's
    /// `onLoopShutdown` is called and the thread is joined. Idempotent; must not be
    /// called on the loop thread (it would wait for itself).
    public func shutdown() {
        precondition(!inEventLoop, "EventLoop.shutdown() called on its own thread")
        let mustWake = state.withLock { state -> Bool in
            guard state.lifecycle == .running else { return false }
            state.lifecycle = .stopping
            return true
        }
        if mustWake { epoll.wake() }
        // Holding the lock makes a second caller wait until the first has joined the thread.
        thread.withLock { thread in
            thread?.join()
            thread = nil
        }
    }

    // MARK: - The loop

    private func run() {
        threadID.store(OSThread.currentID, ordering: .releasing)
        var events = EpollEvents(capacity: 256)
        while let timeout = nextTimeout() {
            let count: Int
            do {
                count = try epoll.wait(into: &events, timeout: timeout)
            } catch {
                fatalError("\(self): \(error)")  // EBADF/EFAULT/EINVAL: the loop's own state is corrupt
            }
            for index in 0..<count {
                let (id, readiness) = events[index]
                if id == Epoll.wakeupID {
                    epoll.consumeWakeups()
                    continue
                }
                // Looked up per event: an earlier handler of this batch may have cancelled this registration.
                guard let onReady = state.withLock({ $0.registrations[id]?.onReady }) else { continue }
                onReady(readiness)
            }
            runDueTimers()
            runTasks()
        }
        finishShutdown()
    }

    /// The `epoll_wait` timeout in milliseconds (0 with work pending, -1 with no timer), or `nil` to stop.
    private func nextTimeout() -> CInt? {
        state.withLock { state -> CInt? in
            if state.lifecycle != .running { return nil }
            if !state.tasks.isEmpty { return 0 }
            guard let deadline = state.timers.nextDeadline else { return -1 }
            let remaining = deadline - ContinuousClock.now
            if remaining <= .zero { return 0 }
            // Rounded up, so that a timer never fires early and the loop does not spin before its deadline.
            let (seconds, attoseconds) = remaining.components
            let milliseconds = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
            return CInt(clamping: milliseconds)
        }
    }

    private func runDueTimers() {
        let due = state.withLock { $0.timers.removeExpired(at: .now) }
        for work in due { work() }
    }

    private func runTasks() {
        let tasks = state.withLock { state -> [@Sendable () -> Void] in
            defer { state.tasks.removeAll(keepingCapacity: true) }
            return state.tasks
        }
        for task in tasks { task() }
    }

    private func finishShutdown() {
        runTasks()
        let registrations = state.withLock { state -> [Registration] in
            state.timers.removeAll()
            defer { state.registrations.removeAll() }
            return Array(state.registrations.values)
        }
        for registration in registrations { registration.onLoopShutdown() }
        // Owners' close callbacks may have submitted more work; run it, a bounded number of rounds.
        for _ in 0..<8 {
            let isIdle = state.withLock { $0.tasks.isEmpty }
            if isIdle { break }
            runTasks()
        }
        state.withLock { state in
            state.lifecycle = .stopped
            state.tasks.removeAll()
            state.timers.removeAll()
        }
        // The epoll and eventfd descriptors are closed when the loop is deallocated, not here: a thread that
        // submitted work just before the stop may still be about to write to the eventfd, and must not write to
        // a reused descriptor number.
    }
}

/// A timer set with `EventLoop.schedule(after:_:)`.
public struct ScheduledWork: Sendable {
    /// The loop the work runs on.
    public let loop: EventLoop
    let id: UInt64
    let deadline: ContinuousClock.Instant

    /// Stops the work if it has not started.
    ///
    /// - Returns: `true` when the work was still pending and will now never run.
    @discardableResult
    public func cancel() -> Bool {
        loop.cancelTimer(id: id, deadline: deadline)
    }
}

/// Errors of `EventLoop` itself.
public enum EventLoopError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The loop has been shut down and takes no more registrations.
    case shutDown

    public var description: String {
        switch self {
        case .shutDown: return "the event loop has been shut down"
        }
    }
}
