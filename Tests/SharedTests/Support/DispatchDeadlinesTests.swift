import Dispatch
import TestSupport
import Testing

@testable import ContextBusSupport

struct DispatchDeadlinesTests {
    let queue = DispatchQueue(label: "test.deadlines")

    @Test func timersAddedOutOfOrderFireInDeadlineOrderOnTheQueue() {
        let deadlines = DispatchDeadlines(queue: queue)
        let fired = Locked<[Int]>([])
        let done = DispatchSemaphore(value: 0)
        let start = DispatchTime.now()
        for milliseconds in [60, 20, 40] {
            deadlines.schedule(at: start + .milliseconds(milliseconds)) { [queue] in
                dispatchPrecondition(condition: .onQueue(queue))
                expectTrue(DispatchTime.now() >= start + .milliseconds(milliseconds))
                fired.withLock { $0.append(milliseconds) }
                if milliseconds == 60 { done.signal() }
            }
        }
        expectTrue(wait(done))
        expectEqual(fired.withLock { $0 }, [20, 40, 60])
        expectEqual(deadlines.count, 0)
    }

    @Test func timersWithTheSameDeadlineFireInTheOrderTheyWereAdded() {
        let deadlines = DispatchDeadlines(queue: queue)
        let fired = Locked<[Int]>([])
        let done = DispatchSemaphore(value: 0)
        let deadline = DispatchTime.now() + .milliseconds(20)
        for index in 0..<50 {
            deadlines.schedule(at: deadline) {
                fired.withLock { $0.append(index) }
                if index == 49 { done.signal() }
            }
        }
        expectTrue(wait(done))
        expectEqual(fired.withLock { $0 }, Array(0..<50))
    }

    @Test func anEarlierTimerAddedAfterALaterOneFiresFirstWithoutWaitingForIt() {
        let deadlines = DispatchDeadlines(queue: queue)
        let lateFired = AtomicFlag()
        let done = DispatchSemaphore(value: 0)
        let late = deadlines.schedule(at: .now() + .seconds(600)) { _ = lateFired.setOnce() }
        deadlines.schedule(at: .now() + .milliseconds(10)) { done.signal() }
        expectTrue(wait(done))
        expectFalse(lateFired.isSet)
        late.dispose()
    }

    @Test func aDisposedTimerNeverRunsAndReleasesItsWorkAtOnce() {
        let deadlines = DispatchDeadlines(queue: queue)
        let runs = Counter()
        final class Payload: Sendable {}
        weak var released: Payload?
        let timer: DispatchDeadlines.Timer
        do {
            let payload = Payload()
            released = payload
            timer = deadlines.schedule(at: .now() + .milliseconds(20)) {
                _ = payload; runs.increment()
            }
        }
        expectNotNil(released)
        timer.dispose()
        expectTrue(timer.isDisposed)
        expectNil(released)
        expectEqual(deadlines.count, 0)
        // A timer after it fires: the disposed one's deadline has passed by then.
        let done = DispatchSemaphore(value: 0)
        deadlines.schedule(at: .now() + .milliseconds(40)) { done.signal() }
        expectTrue(wait(done))
        expectEqual(runs.value, 0)
    }

    @Test func thousandsOfTimeoutsDisposedBeforeTheirDeadlineLeaveNothingPending() {
        let deadlines = DispatchDeadlines(queue: queue)
        let runs = Counter()
        for index in 0..<5_000 {
            let timer = deadlines.schedule(at: .now() + .seconds(10 + index % 7)) { runs.increment() }
            timer.dispose()
        }
        expectEqual(deadlines.count, 0)
        expectEqual(runs.value, 0)
    }

    @Test func aPendingTimerFiresAfterItsOwnerIsReleased() {
        let done = DispatchSemaphore(value: 0)
        do {
            let deadlines = DispatchDeadlines(queue: queue)
            deadlines.schedule(at: .now() + .milliseconds(20)) { done.signal() }
        }
        expectTrue(wait(done))
    }
}
