import Dispatch

/// A scheduler made from any "perform this block on my queue" function: the seam for `ContextScheduler`.
///
/// ```swift
/// let scheduler = PerformScheduler(
///     name: "context \(id)",
///     isCurrent: { context.isOnQueue },
///     perform: { block in context.perform(block) })
/// ```
///
/// `perform` must run blocks one at a time in the order given (a serial queue). A block disposed before
/// `perform` runs it is skipped. Timed blocks wait on a shared timer queue and are then handed to `perform`.
public final class PerformScheduler: Scheduler {
    /// The name shown in errors and descriptions.
    public let name: String
    private let isCurrentCheck: @Sendable () -> Bool
    private let perform: @Sendable (@escaping @Sendable () -> Void) -> Void

    /// Creates a scheduler that hands blocks to `perform`.
    ///
    /// - Parameters:
    ///   - name: shown in errors (for example in `SignalWaitError.wouldDeadlock`).
    ///   - isCurrent: whether the calling thread is running a block given to `perform` (or otherwise owns the
    ///     queue `perform` uses). Blocking `first()` relies on it to refuse waits that would deadlock.
    ///   - perform: runs a block on the owner's queue, asynchronously or at once.
    public init(
        name: String,
        isCurrent: @escaping @Sendable () -> Bool,
        perform: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void
    ) {
        self.name = name
        self.isCurrentCheck = isCurrent
        self.perform = perform
    }

    public var now: SchedulerTime { .monotonicNow }

    public var isCurrent: Bool { isCurrentCheck() }

    @discardableResult
    public func schedule(_ action: @escaping @Sendable () -> Void) -> (any Disposable)? {
        let disposable = AnyDisposable()
        perform {
            if !disposable.isDisposed { action() }
        }
        return disposable
    }

    @discardableResult
    public func schedule(after time: SchedulerTime, _ action: @escaping @Sendable () -> Void) -> any Disposable {
        let disposable = CompositeDisposable()
        let timer = DispatchTimer(deadline: time.dispatchTime, queue: timerQueue) { [perform] in
            perform {
                if !disposable.isDisposed { action() }
            }
        }
        disposable += timer
        return disposable
    }

    public var description: String { "PerformScheduler(\(name))" }
}

/// Where the timers of `PerformScheduler` wait before handing their block to `perform`.
private let timerQueue = DispatchQueue(label: "contextbus.perform-scheduler.timers", qos: .userInitiated)
