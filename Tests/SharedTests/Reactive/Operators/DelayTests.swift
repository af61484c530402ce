import TestSupport
import Testing

@testable import ContextBusReactive

struct DelayTests {
    @Test func delaysValuesAndCompletion() {
        let scheduler = TestScheduler()
        let recorder = EventRecorder<Int, Never>()
        Signal<Int, Never>(values: [1, 2]).delay(.seconds(2), on: scheduler).start(recorder.observer)
        scheduler.advance(by: .seconds(1))
        expectEmpty(recorder.events)
        scheduler.advance(by: .seconds(1))
        expectEqual(recorder.events, [.value(1), .value(2), .completed])
    }

    @Test func failureIsNotDelayed() {
        let scheduler = TestScheduler()
        let recorder = EventRecorder<Int, TestError>()
        Signal<Int, TestError>(value: 1).then(Signal(error: .boom)).delay(.seconds(2), on: scheduler)
            .start(recorder.observer)
        scheduler.advance()
        expectEqual(recorder.events, [.failed(.boom)])
        scheduler.run()
        expectEqual(recorder.events, [.failed(.boom)])
    }

    @Test func disposingDropsPendingValuesAndInterruptsOnTheScheduler() {
        let scheduler = TestScheduler()
        let recorder = EventRecorder<Int, Never>()
        Signal<Int, Never>(values: [1, 2]).delay(.seconds(2), on: scheduler).start(recorder.observer).dispose()
        expectEmpty(recorder.events)
        scheduler.run()
        expectEqual(recorder.events, [.interrupted])
    }
}
