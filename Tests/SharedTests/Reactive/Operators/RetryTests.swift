import TestSupport
import Testing

@testable import ContextBusReactive

struct RetryTests {
    /// A signal that fails its first `failures` starts (after `delay` on `scheduler`), then succeeds.
    private func makeFlaky(
        failures: Int, delay: Duration, on scheduler: TestScheduler, starts: Counter
    ) -> Signal<String, TestError> {
        Signal { observer, lifetime in
            starts.increment()
            let attempt = starts.value
            lifetime += scheduler.schedule(after: delay) {
                if attempt <= failures {
                    observer.send(error: .numbered(attempt))
                } else {
                    observer.send(value: "ok after \(attempt)")
                    observer.sendCompleted()
                }
            }
        }
    }

    @Test func retriesUntilSuccessWithinTheLimit() {
        let scheduler = TestScheduler()
        let starts = Counter()
        let recorder = EventRecorder<String, TestError>()
        makeFlaky(failures: 2, delay: .seconds(1), on: scheduler, starts: starts)
            .retry(upTo: 2)
            .start(recorder.observer)
        scheduler.advance(by: .seconds(1))
        expectEqual(starts.value, 2)
        scheduler.advance(by: .seconds(2))
        expectEqual(recorder.events, [.value("ok after 3"), .completed])
        expectEqual(starts.value, 3)
    }

    @Test func passesOnTheLastFailureWhenRetriesRunOut() {
        let scheduler = TestScheduler()
        let starts = Counter()
        let recorder = EventRecorder<String, TestError>()
        makeFlaky(failures: 5, delay: .seconds(1), on: scheduler, starts: starts)
            .retry(upTo: 2)
            .start(recorder.observer)
        scheduler.run()
        expectEqual(recorder.events, [.failed(.numbered(3))])
        expectEqual(starts.value, 3)
    }

    @Test func synchronousFailuresAreRetriedInALoop() {
        let starts = Counter()
        let recorder = EventRecorder<Int, TestError>()
        Signal<Int, TestError> { observer, _ in
            starts.increment()
            observer.send(error: .boom)
        }
        .retry(upTo: 100_000)
        .start(recorder.observer)
        expectEqual(recorder.events, [.failed(.boom)])
        expectEqual(starts.value, 100_001)
    }

    @Test func retryWithIntervalWaitsBetweenAttempts() {
        let scheduler = TestScheduler()
        let starts = Counter()
        let recorder = EventRecorder<String, TestError>()
        makeFlaky(failures: 1, delay: .zero, on: scheduler, starts: starts)
            .retry(upTo: 3, interval: .seconds(10), on: scheduler)
            .start(recorder.observer)
        scheduler.advance()
        expectEqual(starts.value, 1)
        scheduler.advance(by: .seconds(9))
        expectEqual(starts.value, 1)
        scheduler.advance(by: .seconds(1))
        expectEqual(starts.value, 2)
        scheduler.advance()
        expectEqual(recorder.events, [.value("ok after 2"), .completed])
    }

    @Test func disposingStopsRetrying() {
        let scheduler = TestScheduler()
        let starts = Counter()
        let recorder = EventRecorder<String, TestError>()
        let disposable = makeFlaky(failures: 10, delay: .seconds(1), on: scheduler, starts: starts)
            .retry(upTo: 10)
            .start(recorder.observer)
        scheduler.advance(by: .seconds(1))
        disposable.dispose()
        scheduler.run()
        expectEqual(starts.value, 2)
        expectEqual(recorder.events, [.interrupted])
    }
}
