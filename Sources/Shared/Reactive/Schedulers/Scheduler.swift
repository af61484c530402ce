/// Runs blocks of work, now or at a time: where signals deliver events and time-based operators wait.
///
/// Contract (see docs/ReactiveContracts.md):
/// - Blocks scheduled on one scheduler run one at a time, in the order they were scheduled (for timed blocks, in
///   order of time, then of scheduling). Every scheduler here is serial; an implementation that is not must not
///   be used with `deliver(on:)` or the time-based operators.
/// - A block whose disposable was disposed before it started does not run.
/// - `isCurrent` is true exactly while the calling thread is running a block of this scheduler (or is otherwise
///   the thread the scheduler would need to run its next block). Blocking that thread while waiting for the
///   scheduler would deadlock, which is what blocking `first()` checks.
public protocol Scheduler: Sendable, CustomStringConvertible {
    /// The scheduler's current time.
    var now: SchedulerTime { get }

    /// Whether the calling thread is running on this scheduler now.
    var isCurrent: Bool { get }

    /// Schedules `action` to run as soon as possible.
    ///
    /// - Returns: a disposable that prevents `action` from running if it has not started yet, or nil when the
    ///   action already ran (an immediate scheduler).
    @discardableResult
    func schedule(_ action: @escaping @Sendable () -> Void) -> (any Disposable)?

    /// Schedules `action` to run at `time` (or as soon as possible if `time` has passed).
    ///
    /// - Returns: a disposable that cancels the block (and releases it) if it has not started yet.
    @discardableResult
    func schedule(after time: SchedulerTime, _ action: @escaping @Sendable () -> Void) -> any Disposable
}

extension Scheduler {
    /// Schedules `action` to run `delay` from now (negative delays count as zero).
    @discardableResult
    public func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> any Disposable {
        schedule(after: now + delay.clampedToNonNegative, action)
    }
}
