import TestSupport
import Testing

@testable import ContextBusReactive

struct ImmediateSchedulerTests {
    @Test func runsBlocksAtOnceAndIsNeverCurrent() {
        let scheduler = ImmediateScheduler()
        let runs = Counter()
        expectNil(scheduler.schedule { runs.increment() })
        expectEqual(runs.value, 1)
        expectFalse(scheduler.isCurrent)
    }

    @Test func timedBlocksWaitForTheirTimeOnTheCallingThread() {
        let scheduler = ImmediateScheduler()
        let start = scheduler.now
        let runs = Counter()
        let disposable = scheduler.schedule(after: .milliseconds(2)) { runs.increment() }
        expectEqual(runs.value, 1)
        expectTrue(scheduler.now >= start + .milliseconds(2))
        expectTrue(disposable.isDisposed)
    }
}
