import Dispatch
import TestSupport
import Testing

@testable import ContextBusReactive
@testable import ContextBusSupport

struct DeliverOnTests {
    @Test func deliversEveryEventOnTheQueueInOrder() {
        let scheduler = QueueScheduler(name: "test.deliver")
        let offQueue = Counter()
        let recorder = EventRecorder<Int, Never>()
        Signal<Int, Never>(values: 0..<1_000)
            .deliver(on: scheduler)
            .on(
                value: { _ in if !scheduler.isCurrent { offQueue.increment() } },
                terminated: { if !scheduler.isCurrent { offQueue.increment() } }
            )
            .start(recorder.observer)
        expectTrue(recorder.waitForTermination())
        expectEqual(offQueue.value, 0)
        expectEqual(recorder.values, Array(0..<1_000))
        expectEqual(recorder.events.last, .completed)
    }

    @Test func interruptionIsDeliveredOnTheQueueToo() {
        let scheduler = QueueScheduler(name: "test.deliver.interrupt")
        let onQueue = Locked<Bool?>(nil)
        let done = DispatchSemaphore(value: 0)
        Signal<Int, Never>.never
            .deliver(on: scheduler)
            .start(
                Observer(interrupted: {
                    onQueue.withLock { $0 = scheduler.isCurrent }
                    done.signal()
                })
            )
            .dispose()
        expectTrue(wait(done))
        expectEqual(onQueue.withLock { $0 }, true)
    }

    @Test func nothingIsDeliveredBeforeTheSchedulerRuns() {
        let scheduler = TestScheduler()
        let recorder = EventRecorder<Int, Never>()
        Signal<Int, Never>(values: [1, 2]).deliver(on: scheduler).start(recorder.observer)
        expectEmpty(recorder.events)
        scheduler.advance()
        expectEqual(recorder.events, [.value(1), .value(2), .completed])
    }

    @Test func disposalDropsUndeliveredValues() {
        let scheduler = TestScheduler()
        let recorder = EventRecorder<Int, Never>()
        Signal<Int, Never>(values: [1, 2]).concatNever().deliver(on: scheduler).start(recorder.observer).dispose()
        scheduler.advance()
        expectEqual(recorder.events, [.interrupted])
    }

    @Test func startOnRunsTheProducerOnTheScheduler() {
        let scheduler = TestScheduler()
        let onScheduler = Locked<Bool?>(nil)
        let recorder = EventRecorder<Int, Never>()
        Signal<Int, Never> { observer, _ in
            onScheduler.withLock { $0 = scheduler.isCurrent }
            observer.send(value: 1)
        }
        .start(on: scheduler)
        .start(recorder.observer)
        expectNil(onScheduler.withLock { $0 })
        scheduler.advance()
        expectEqual(onScheduler.withLock { $0 }, true)
        expectEqual(recorder.values, [1])
    }

    @Test func startOnDisposedBeforeItRunsNeverStartsTheProducer() {
        let scheduler = TestScheduler()
        let starts = Counter()
        let recorder = EventRecorder<Int, Never>()
        Signal<Int, Never> { _, _ in starts.increment() }
            .start(on: scheduler)
            .start(recorder.observer)
            .dispose()
        scheduler.run()
        expectEqual(starts.value, 0)
        expectEqual(recorder.events, [.interrupted])
    }
}

extension Signal {
    /// This signal's values, then never completing (so that a test can dispose it mid-way).
    fileprivate func concatNever() -> Signal {
        Signal<Signal, Failure>(values: [self, .never]).flatten(.concat)
    }
}
