import ContextBusSupport

/// A scheduler in virtual time, for deterministic tests of time-based operators: nothing runs until the test
/// advances the clock.
///
/// ```swift
/// let scheduler = TestScheduler()
/// signal.timeout(after: .seconds(5), raising: .timedOut, on: scheduler).start(observer)
/// scheduler.advance(by: .seconds(4))   // nothing yet
/// scheduler.advance(by: .seconds(1))   // the timeout fires, on this thread
/// ```
///
/// Blocks run on the thread that advances the clock, one at a time, in order of due time and then of
/// scheduling; `schedule(_:)` queues a block for the current time (it runs on the next `advance`).
public final class TestScheduler: Scheduler {
    private struct Entry {
        let time: SchedulerTime
        let sequence: UInt64
        let action: @Sendable () -> Void
        let disposable: AnyDisposable
    }

    private struct State {
        var now: SchedulerTime
        /// Kept sorted by (time, sequence).
        var entries: [Entry] = []
        var nextSequence: UInt64 = 0
        /// The thread running a block right now, if any.
        var runningThread: UInt?
    }

    private let state: Locked<State>

    /// Creates a scheduler whose clock starts at `start`.
    public init(startingAt start: SchedulerTime = .zero) {
        state = Locked(State(now: start))
    }

    public var now: SchedulerTime { state.withLock { $0.now } }

    public var isCurrent: Bool {
        state.withLock { state in
            state.runningThread == CurrentThread.id
        }
    }

    /// The number of blocks waiting to run (including disposed ones not yet dropped).
    public var pendingCount: Int { state.withLock { $0.entries.count(where: { !$0.disposable.isDisposed }) } }

    @discardableResult
    public func schedule(_ action: @escaping @Sendable () -> Void) -> (any Disposable)? {
        enqueue(at: nil, action)
    }

    @discardableResult
    public func schedule(after time: SchedulerTime, _ action: @escaping @Sendable () -> Void) -> any Disposable {
        enqueue(at: time, action)
    }

    /// Runs the blocks that are due now, without moving the clock.
    public func advance() {
        advance(to: now)
    }

    /// Moves the clock forward by `interval`, running every block due up to the new time, in order.
    public func advance(by interval: Duration) {
        advance(to: now + interval.clampedToNonNegative)
    }

    /// Moves the clock to `time` (never backwards), running every block due up to it, in order.
    public func advance(to time: SchedulerTime) {
        while let entry = nextEntry(dueBy: time) {
            run(entry)
        }
        state.withLock { $0.now = Swift.max($0.now, time) }
    }

    /// Runs every scheduled block, including those scheduled while running, moving the clock to each one's time.
    public func run() {
        while let entry = nextEntry(dueBy: .distantFuture) {
            run(entry)
        }
    }

    public var description: String { "TestScheduler(\(now))" }

    private func enqueue(at time: SchedulerTime?, _ action: @escaping @Sendable () -> Void) -> AnyDisposable {
        let disposable = AnyDisposable()
        state.withLock { state in
            let entry = Entry(
                time: Swift.max(time ?? state.now, state.now), sequence: state.nextSequence, action: action,
                disposable: disposable)
            state.nextSequence += 1
            let index =
                state.entries.lastIndex(where: { ($0.time, $0.sequence) <= (entry.time, entry.sequence) })
                .map { $0 + 1 } ?? 0
            state.entries.insert(entry, at: index)
        }
        return disposable
    }

    /// Removes and returns the first block due by `time` that was not disposed, moving the clock to its time.
    private func nextEntry(dueBy time: SchedulerTime) -> Entry? {
        state.withLock { state in
            while let first = state.entries.first, first.time <= time {
                state.entries.removeFirst()
                if first.disposable.isDisposed { continue }
                state.now = Swift.max(state.now, first.time)
                return first
            }
            return nil
        }
    }

    private func run(_ entry: Entry) {
        guard !entry.disposable.isDisposed else { return }
        let previous = state.withLock { state in
            defer { state.runningThread = CurrentThread.id }
            return state.runningThread
        }
        entry.action()
        state.withLock { $0.runningThread = previous }
    }
}
