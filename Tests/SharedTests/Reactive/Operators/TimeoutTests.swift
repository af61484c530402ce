import TestSupport
import Testing

@testable import ContextBusReactive

struct TimeoutTests {
    @Test func failsWhenTimeIsUpAndStopsTheUpstream() {
        let scheduler = TestScheduler()
        let cleanups = Counter()
        let recorder = EventRecorder<Int, TestError>()
        Signal<Int, TestError> { observer, lifetime in
            lifetime.observeEnded { cleanups.increment() }
            observer.send(value: 1)
        }
        .timeout(after: .seconds(5), raising: .timedOut, on: scheduler)
        .start(recorder.observer)
        scheduler.advance(by: .milliseconds(4_999))
        expectEqual(recorder.events, [.value(1)])
        scheduler.advance(by: .milliseconds(1))
        expectEqual(recorder.events, [.value(1), .failed(.timedOut)])
        expectEqual(cleanups.value, 1)
    }

    @Test func aSignalThatEndsInTimeCancelsTheTimer() {
        let scheduler = TestScheduler()
        let recorder = EventRecorder<Int, TestError>()
        Signal<Int, TestError>(value: 1)
            .timeout(after: .seconds(5), raising: .timedOut, on: scheduler)
            .start(recorder.observer)
        scheduler.run()
        expectEqual(recorder.events, [.value(1), .completed])
        expectEqual(scheduler.pendingCount, 0)
    }

    @Test func disposingCancelsTheTimer() {
        let scheduler = TestScheduler()
        let recorder = EventRecorder<Int, TestError>()
        Signal<Int, TestError>.never
            .timeout(after: .seconds(1), raising: .timedOut, on: scheduler)
            .start(recorder.observer)
            .dispose()
        scheduler.run()
        expectEqual(recorder.events, [.interrupted])
    }

    @Test func aHugeTimeoutDoesNotTrap() {
        let scheduler = TestScheduler()
        let recorder = EventRecorder<Int, TestError>()
        Signal<Int, TestError>.never
            .timeout(after: .seconds(Int64.max), raising: .timedOut, on: scheduler)
            .start(recorder.observer)
        scheduler.advance(by: .seconds(1_000_000))
        expectEmpty(recorder.events)
    }
}
