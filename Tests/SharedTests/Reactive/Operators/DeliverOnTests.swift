import Dispatch
import Shared
import Synchronization
import Testing

@Suite struct DeliverOnTests {
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
        #expect(recorder.waitForTermination())
        #expect(offQueue.value == 0)
        #expect(recorder.values == Array(0..<1_000))
        #expect(recorder.events.last == .completed)
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
        #expect(wait(done))
        #expect(onQueue.withLock { $0 } == true)
    }

    @Test func nothingIsDeliveredBeforeTheSchedulerRuns() {
        let scheduler = TestScheduler()
        let recorder = EventRecorder<Int, Never>()
        Signal<Int, Never>(values: [1, 2]).deliver(on: scheduler).start(recorder.observer)
        #expect(recorder.events.isEmpty)
        scheduler.advance()
        #expect(recorder.events == [.value(1), .value(2), .completed])
    }

    @Test func disposalDropsUndeliveredValues() {
        let scheduler = TestScheduler()
        let recorder = EventRecorder<Int, Never>()
        Signal<Int, Never>(values: [1, 2]).concatNever().deliver(on: scheduler).start(recorder.observer).dispose()
        scheduler.advance()
        #expect(recorder.events == [.interrupted])
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
        #expect(onScheduler.withLock { $0 } == nil)
        scheduler.advance()
        #expect(onScheduler.withLock { $0 } == true)
        #expect(recorder.values == [1])
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
        #expect(starts.value == 0)
        #expect(recorder.events == [.interrupted])
    }
}

extension Signal {
    /// This signal's values, then never completing (so that a test can dispose it mid-way).
    fileprivate func concatNever() -> Signal {
        Signal<Signal, Failure>(values: [self, .never]).flatten(.concat)
    }
}
