import Dispatch
import TestSupport
import Testing

@testable import ContextBusReactive
@testable import ContextBusSupport

struct PerformSchedulerTests {
    /// A stand-in for an object context's queue.
    private func makeContextLikeScheduler() -> (PerformScheduler, DispatchQueue) {
        let queue = DispatchQueue(label: "test.context")
        let key = DispatchSpecificKey<Bool>()
        queue.setSpecific(key: key, value: true)
        let scheduler = PerformScheduler(
            name: "context",
            isCurrent: { DispatchQueue.getSpecific(key: key) == true },
            perform: { block in queue.async(execute: block) })
        return (scheduler, queue)
    }

    @Test func handsBlocksToPerformAndReportsIsCurrent() {
        let (scheduler, _) = makeContextLikeScheduler()
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

    @Test func aBlockDisposedBeforeItRunsIsSkipped() {
        let (scheduler, queue) = makeContextLikeScheduler()
        let runs = Counter()
        let gate = DispatchSemaphore(value: 0)
        queue.async { _ = gate.wait(timeout: .now() + .seconds(10)) }
        scheduler.schedule { runs.increment() }?.dispose()
        gate.signal()
        expectEqual(queue.sync { runs.value }, 0)
    }

    @Test func timedBlocksArePerformedOnTheOwnersQueue() {
        let (scheduler, _) = makeContextLikeScheduler()
        let done = DispatchSemaphore(value: 0)
        let wasCurrent = Locked<Bool?>(nil)
        scheduler.schedule(after: .milliseconds(2)) {
            wasCurrent.withLock { $0 = scheduler.isCurrent }
            done.signal()
        }
        expectTrue(wait(done))
        expectEqual(wasCurrent.withLock { $0 }, true)
    }

    @Test func aDisposedTimedBlockIsSkipped() {
        let (scheduler, queue) = makeContextLikeScheduler()
        let runs = Counter()
        scheduler.schedule(after: .seconds(5)) { runs.increment() }.dispose()
        let done = DispatchSemaphore(value: 0)
        scheduler.schedule(after: .milliseconds(20)) { done.signal() }
        expectTrue(wait(done))
        expectEqual(queue.sync { runs.value }, 0)
    }
}
