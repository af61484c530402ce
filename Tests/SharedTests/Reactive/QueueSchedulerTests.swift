import Dispatch
import TestSupport
import Testing

@testable import ContextBusReactive
@testable import ContextBusSupport

struct QueueSchedulerTests {
    @Test func runsBlocksOnItsQueueWhereItIsCurrent() {
        let scheduler = QueueScheduler(name: "test.queue", priority: .high)
        let done = DispatchSemaphore(value: 0)
        let wasCurrent = Locked<Bool?>(nil)
        scheduler.schedule {
            wasCurrent.withLock { $0 = scheduler.isCurrent }
            done.signal()
        }
        expectTrue(wait(done))
        expectEqual(wasCurrent.withLock { $0 }, true)
        expectFalse(scheduler.isCurrent)
    }

    @Test func anotherSchedulersQueueIsNotCurrent() {
        let scheduler = QueueScheduler(name: "test.a")
        let other = QueueScheduler(name: "test.b")
        let answer = other.queue.sync { scheduler.isCurrent }
        expectFalse(answer)
    }

    @Test func aQueueTargetingTheSchedulersQueueCountsAsCurrent() {
        let scheduler = QueueScheduler(name: "test.target")
        let child = DispatchQueue(label: "test.child", target: scheduler.queue)
        expectTrue(child.sync { scheduler.isCurrent })
    }

    @Test func runsBlocksInOrder() {
        let scheduler = QueueScheduler()
        let order = Locked<[Int]>([])
        let done = DispatchSemaphore(value: 0)
        for index in 0..<100 {
            scheduler.schedule {
                order.withLock { $0.append(index) }
                if index == 99 { done.signal() }
            }
        }
        expectTrue(wait(done))
        expectEqual(order.withLock { $0 }, Array(0..<100))
    }

    @Test func aDisposedBlockDoesNotRun() {
        let scheduler = QueueScheduler()
        let runs = Counter()
        let gate = DispatchSemaphore(value: 0)
        scheduler.schedule { _ = gate.wait(timeout: .now() + .seconds(10)) }
        scheduler.schedule { runs.increment() }?.dispose()
        scheduler.schedule(after: .seconds(5)) { runs.increment() }.dispose()
        gate.signal()
        let done = DispatchSemaphore(value: 0)
        scheduler.schedule(after: .milliseconds(20)) { done.signal() }
        expectTrue(wait(done))
        expectEqual(runs.value, 0)
    }

    @Test func timedBlocksRunOnTheQueueAfterTheirTime() {
        let scheduler = QueueScheduler()
        let done = DispatchSemaphore(value: 0)
        let start = scheduler.now
        let observed = Locked<(SchedulerTime, Bool)?>(nil)
        scheduler.schedule(after: .milliseconds(5)) {
            observed.withLock { $0 = (scheduler.now, scheduler.isCurrent) }
            done.signal()
        }
        expectTrue(wait(done))
        let (time, wasCurrent) = observed.withLock { $0 }!
        expectTrue(time >= start + .milliseconds(5))
        expectTrue(wasCurrent)
    }
}
