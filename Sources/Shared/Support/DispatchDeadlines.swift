public import Dispatch
import Synchronization

/// One-shot timers on a dispatch queue that share ONE dispatch timer source.
///
/// A `DispatchTimer` is a dispatch source of its own: making, arming and cancelling it each hand work to
/// libdispatch's manager thread, and `asyncAfter` cannot be cancelled at all (its block waits in the manager's heap
/// until its deadline, then wakes a worker to do nothing). Timeouts that almost never fire, a step's or a D-Bus
/// call's, pay that on every step. Here adding a timer is a lock and an insert into a sorted array, cancelling one
/// removes it (releasing its work at once), and the shared source is re-armed only when a timer earlier than the
/// one it is set for is added, or when it fires.
///
/// Due timers run on `queue` in deadline order; timers with the same deadline run in the order they were added.
/// A timer either fires or is cancelled, never both: its work does not run if `dispose()` came first. As with a
/// dispatch source, a pending timer fires even when its `DispatchDeadlines` is no longer referenced; the shared
/// source is cancelled once the owner is gone and no timer is pending.
public final class DispatchDeadlines: Sendable {
    private let core: Core

    /// Timers whose work runs on `queue`.
    public init(queue: DispatchQueue) {
        core = Core(queue: queue)
    }

    deinit {
        core.ownerIsGone()
    }

    /// Runs `work` on the queue at `deadline`, unless the returned timer is disposed first.
    @discardableResult
    public func schedule(at deadline: DispatchTime, _ work: @escaping @Sendable () -> Void) -> Timer {
        core.schedule(at: deadline, work)
    }

    /// The timers waiting to fire (tests).
    public var count: Int { core.count }

    /// One timer of `DispatchDeadlines`; disposing it cancels it (a `Disposable` in ContextBusReactive).
    public final class Timer: Sendable {
        private let core: Core
        fileprivate let deadline: DispatchTime
        fileprivate let id: UInt64
        private let decided = AtomicFlag()

        fileprivate init(core: Core, deadline: DispatchTime, id: UInt64) {
            self.core = core
            self.deadline = deadline
            self.id = id
        }

        public var isDisposed: Bool { decided.isSet }

        public func dispose() {
            guard decided.setOnce() else { return }
            core.remove(self)
        }

        /// Marks the timer fired; `false` when it was disposed first.
        fileprivate func claim() -> Bool { decided.setOnce() }
    }

    /// The source and the pending timers. The source's handler holds the core, so pending timers outlive the owner;
    /// the source is cancelled (ending that cycle) once the owner is gone and nothing is pending.
    fileprivate final class Core: Sendable {
        /// `DispatchSourceTimer` is not marked `Sendable`, but dispatch sources are thread-safe: `schedule` and
        /// `cancel` may be called from any thread. After `init` it is only re-armed and cancelled, under `state`'s lock.
        private nonisolated(unsafe) let source: any DispatchSourceTimer
        private let state = Locked(State())
        /// Orders timers with the same deadline.
        private let nextID = Atomic<UInt64>(0)

        private struct State {
            var timers = TimerQueue<DispatchTime>()
            /// The deadline the source is set for; `nil` when it is idle.
            var armed: DispatchTime?
            var isOwnerGone = false
            var isCancelled = false
        }

        init(queue: DispatchQueue) {
            source = DispatchSource.makeTimerSource(queue: queue)
            source.setEventHandler { [self] in fire() }
            source.resume()
        }

        var count: Int { state.withLock { $0.timers.count } }

        func schedule(at deadline: DispatchTime, _ work: @escaping @Sendable () -> Void) -> Timer {
            let timer = Timer(core: self, deadline: deadline, id: nextID.add(1, ordering: .relaxed).newValue)
            // Firing claims the timer, as disposing does: whichever comes first wins, so a timer disposed on another
            // thread while its deadline passes either runs or is cancelled, never both.
            let entry = TimerQueue<DispatchTime>.Entry(deadline: deadline, id: timer.id) {
                if timer.claim() { work() }
            }
            state.withLock { state in
                state.timers.insert(entry)
                if state.armed.map({ deadline < $0 }) ?? true { arm(at: deadline, &state) }
            }
            return timer
        }

        func remove(_ timer: Timer) {
            // The source stays armed: if this was the earliest timer, it fires, finds nothing due and re-arms.
            state.withLock { state in
                _ = state.timers.remove(deadline: timer.deadline, id: timer.id)
                cancelIfDone(&state)
            }
        }

        func ownerIsGone() {
            state.withLock { state in
                state.isOwnerGone = true
                cancelIfDone(&state)
            }
        }

        private func fire() {
            let due = state.withLock { state -> [@Sendable () -> Void] in
                let due = state.timers.removeExpired(at: .now())
                state.armed = nil
                if let next = state.timers.nextDeadline { arm(at: next, &state) }
                cancelIfDone(&state)
                return due
            }
            for work in due { work() }
        }

        /// Sets the source for `deadline`; called with the state locked, so that `armed` is the source's setting.
        private func arm(at deadline: DispatchTime, _ state: inout State) {
            guard !state.isCancelled else { return }
            state.armed = deadline
            source.schedule(deadline: deadline, repeating: .never)
        }

        private func cancelIfDone(_ state: inout State) {
            guard state.isOwnerGone, state.timers.isEmpty, !state.isCancelled else { return }
            state.isCancelled = true
            source.cancel()
        }
    }
}
