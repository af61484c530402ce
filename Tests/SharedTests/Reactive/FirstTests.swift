import Dispatch
import TestSupport
import Testing

@testable import ContextBusReactive

struct FirstTests {
    @Test func returnsTheFirstValueAndDisposes() {
        let cleanups = Counter()
        let result = Signal<Int, TestError> { observer, lifetime in
            lifetime.observeEnded { cleanups.increment() }
            observer.send(value: 1)
            observer.send(value: 2)
        }.first()
        expectEqual(result, .success(1))
        expectEqual(cleanups.value, 1)
    }

    @Test func reportsWhyThereIsNoValue() {
        expectTrue(Signal<Int, TestError>(error: .boom).first() == .failure(.failed(.boom)))
        expectTrue(Signal<Int, TestError>.empty.first() == .failure(.completedWithoutValue))
        expectTrue(Signal<Int, TestError>.empty.first(or: 5) == 5)
    }

    @Test func waitsForAValueFromAnotherThread() {
        let scheduler = QueueScheduler(name: "test.first.other")
        let result = Signal<Int, TestError>(value: 3).deliver(on: scheduler).first()
        expectEqual(result, .success(3))
    }

    @Test func blockingOnTheSchedulerItWouldWaitForFailsFastInsteadOfDeadlocking() {
        let scheduler = QueueScheduler(name: "test.first.deadlock")
        let signal = Signal<Int, TestError>(value: 3).deliver(on: scheduler)
        let result = scheduler.queue.sync { signal.first() }
        expectEqual(result, .failure(.wouldDeadlock(scheduler: scheduler.description)))
    }

    @Test func startOnTheCurrentSchedulerIsDetectedToo() {
        let scheduler = QueueScheduler(name: "test.first.start-on")
        let result = scheduler.queue.sync { Signal<Int, TestError>(value: 3).start(on: scheduler).first() }
        expectEqual(result, .failure(.wouldDeadlock(scheduler: scheduler.description)))
    }

    @Test func anExplicitSchedulerIsChecked() {
        let scheduler = QueueScheduler(name: "test.first.explicit")
        let result = scheduler.queue.sync {
            Signal<Int, TestError>.never.first(waitingOn: scheduler)
        }
        expectEqual(result, .failure(.wouldDeadlock(scheduler: scheduler.description)))
    }

    @Test func aSynchronousValueIsReturnedEvenOnTheScheduler() {
        let scheduler = QueueScheduler(name: "test.first.sync")
        let result = scheduler.queue.sync {
            Signal<Int, TestError>(value: 4).timeout(after: .seconds(10), raising: .timedOut, on: scheduler).first()
        }
        expectEqual(result, .success(4))
    }

    @Test func contextLikePerformSchedulerIsDetected() {
        let queue = DispatchQueue(label: "test.first.context")
        let key = DispatchSpecificKey<Bool>()
        queue.setSpecific(key: key, value: true)
        let scheduler = PerformScheduler(
            name: "context", isCurrent: { DispatchQueue.getSpecific(key: key) == true },
            perform: { queue.async(execute: $0) })
        let signal = Signal<Int, TestError>(value: 1).deliver(on: scheduler)
        expectEqual(queue.sync { signal.first() }, .failure(.wouldDeadlock(scheduler: "PerformScheduler(context)")))
        expectEqual(signal.first(), .success(1))
    }
}
