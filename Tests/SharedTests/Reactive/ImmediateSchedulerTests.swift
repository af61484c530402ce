import Shared
import TestSupport
import Testing

@Suite struct ImmediateSchedulerTests {
    @Test func runsBlocksAtOnceAndIsNeverCurrent() {
        let scheduler = ImmediateScheduler()
        let runs = Counter()
        #expect(scheduler.schedule { runs.increment() } == nil)
        expectEqual(runs.value, 1)
        #expect(!scheduler.isCurrent)
    }

    @Test func timedBlocksWaitForTheirTimeOnTheCallingThread() {
        let scheduler = ImmediateScheduler()
        let start = scheduler.now
        let runs = Counter()
        let disposable = scheduler.schedule(after: .milliseconds(2)) { runs.increment() }
        expectEqual(runs.value, 1)
        #expect(scheduler.now >= start + .milliseconds(2))
        #expect(disposable.isDisposed)
    }
}
