import TestSupport
import Testing

@testable import ContextBusReactive
@testable import ContextBusSupport

struct TestSchedulerTests {
    @Test func runsNothingUntilAdvanced() {
        let scheduler = TestScheduler()
        let runs = Counter()
        scheduler.schedule { runs.increment() }
        scheduler.schedule(after: .seconds(1)) { runs.increment() }
        expectEqual(runs.value, 0)
        scheduler.advance()
        expectEqual(runs.value, 1)
        scheduler.advance(by: .milliseconds(999))
        expectEqual(runs.value, 1)
        scheduler.advance(by: .milliseconds(1))
        expectEqual(runs.value, 2)
        expectEqual(scheduler.now, SchedulerTime(nanoseconds: 1_000_000_000))
    }

    @Test func runsBlocksInOrderOfTimeThenOfScheduling() {
        let scheduler = TestScheduler()
        let order = Locked<[String]>([])
        scheduler.schedule(after: .seconds(2)) { order.withLock { $0.append("b") } }
        scheduler.schedule(after: .seconds(1)) { order.withLock { $0.append("a1") } }
        scheduler.schedule(after: .seconds(1)) { order.withLock { $0.append("a2") } }
        scheduler.run()
        expectEqual(order.withLock { $0 }, ["a1", "a2", "b"])
        expectEqual(scheduler.now, SchedulerTime(nanoseconds: 2_000_000_000))
    }

    @Test func blocksScheduledWhileAdvancingRunIfDueInTheSameAdvance() {
        let scheduler = TestScheduler()
        let times = Locked<[SchedulerTime]>([])
        scheduler.schedule(after: .seconds(1)) {
            times.withLock { $0.append(scheduler.now) }
            scheduler.schedule(after: .seconds(1)) { times.withLock { $0.append(scheduler.now) } }
        }
        scheduler.advance(by: .seconds(5))
        expectEqual(
            times.withLock { $0 }, [SchedulerTime(nanoseconds: 1_000_000_000), .init(nanoseconds: 2_000_000_000)])
        expectEqual(scheduler.now, SchedulerTime(nanoseconds: 5_000_000_000))
    }

    @Test func disposedBlocksAreSkipped() {
        let scheduler = TestScheduler()
        let runs = Counter()
        scheduler.schedule(after: .seconds(1)) { runs.increment() }.dispose()
        scheduler.schedule { runs.increment() }?.dispose()
        scheduler.run()
        expectEqual(runs.value, 0)
        expectEqual(scheduler.pendingCount, 0)
    }

    @Test func isCurrentOnlyWhileRunningABlock() {
        let scheduler = TestScheduler()
        let inside = Locked<Bool?>(nil)
        scheduler.schedule { inside.withLock { $0 = scheduler.isCurrent } }
        expectFalse(scheduler.isCurrent)
        scheduler.advance()
        expectEqual(inside.withLock { $0 }, true)
        expectFalse(scheduler.isCurrent)
    }

    @Test func negativeAdvanceDoesNotMoveTheClockBackwards() {
        let scheduler = TestScheduler(startingAt: SchedulerTime(nanoseconds: 100))
        scheduler.advance(by: .seconds(-5))
        expectEqual(scheduler.now, SchedulerTime(nanoseconds: 100))
    }
}
