import ContextBusSupport

/// Runs every block at once on the calling thread (RACScheduler.immediateScheduler).
///
/// `schedule(after:)` blocks the calling thread until the time has come and then runs the block, as RAC's
/// immediate scheduler does; prefer a `QueueScheduler` for anything that waits. It owns no thread, so
/// `isCurrent` is always false: nothing can deadlock by waiting for it.
public final class ImmediateScheduler: Scheduler {
    /// Creates an immediate scheduler (they are all alike).
    public init() {}

    public var now: SchedulerTime { .monotonicNow }

    public var isCurrent: Bool { false }

    @discardableResult
    public func schedule(_ action: @escaping @Sendable () -> Void) -> (any Disposable)? {
        action()
        return nil
    }

    @discardableResult
    public func schedule(after time: SchedulerTime, _ action: @escaping @Sendable () -> Void) -> any Disposable {
        while true {
            let remaining = (time - now).saturatingNanoseconds
            if remaining <= 0 { break }
            CurrentThread.sleep(nanoseconds: remaining)
        }
        action()
        let done = AnyDisposable()
        done.dispose()
        return done
    }

    public var description: String { "ImmediateScheduler" }
}
