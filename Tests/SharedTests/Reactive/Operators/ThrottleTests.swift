import TestSupport
import Testing

@testable import ContextBusReactive
@testable import ContextBusSupport

struct ThrottleTests {
    @Test func sendsAtMostOneValuePerIntervalKeepingTheLatest() {
        let scheduler = TestScheduler()
        let sink = Locked<Observer<Int, Never>?>(nil)
        let recorder = EventRecorder<Int, Never>()
        Signal<Int, Never> { observer, _ in sink.withLock { $0 = observer } }
            .throttle(.seconds(1), on: scheduler)
            .start(recorder.observer)
        let send = sink.withLock { $0! }
        send.send(value: 1)
        scheduler.advance()
        expectEqual(recorder.values, [1])
        send.send(value: 2)
        send.send(value: 3)
        scheduler.advance(by: .milliseconds(500))
        expectEqual(recorder.values, [1])
        scheduler.advance(by: .milliseconds(500))
        expectEqual(recorder.values, [1, 3])
        scheduler.advance(by: .seconds(5))
        send.send(value: 4)
        scheduler.advance()
        expectEqual(recorder.values, [1, 3, 4])
    }

    @Test func terminationDiscardsAHeldValue() {
        let scheduler = TestScheduler()
        let recorder = EventRecorder<Int, Never>()
        Signal<Int, Never>(values: [1, 2]).throttle(.seconds(1), on: scheduler).start(recorder.observer)
        scheduler.run()
        expectEqual(recorder.events, [.completed])
    }

    @Test func disposingInterruptsOnTheScheduler() {
        let scheduler = TestScheduler()
        let recorder = EventRecorder<Int, Never>()
        Signal<Int, Never>.never.throttle(.seconds(1), on: scheduler).start(recorder.observer).dispose()
        scheduler.run()
        expectEqual(recorder.events, [.interrupted])
    }
}
