import TestSupport
import Testing

@testable import ContextBusReactive
@testable import ContextBusSupport

struct DebounceTests {
    @Test func sendsAValueOnlyAfterAQuietInterval() {
        let scheduler = TestScheduler()
        let sink = Locked<Observer<Int, Never>?>(nil)
        let recorder = EventRecorder<Int, Never>()
        Signal<Int, Never> { observer, _ in sink.withLock { $0 = observer } }
            .debounce(.seconds(1), on: scheduler)
            .start(recorder.observer)
        let send = sink.withLock { $0! }
        send.send(value: 1)
        scheduler.advance(by: .milliseconds(900))
        send.send(value: 2)
        scheduler.advance(by: .milliseconds(900))
        expectEmpty(recorder.values)
        scheduler.advance(by: .milliseconds(100))
        expectEqual(recorder.values, [2])
        send.send(value: 3)
        scheduler.advance(by: .seconds(1))
        expectEqual(recorder.values, [2, 3])
    }

    @Test func completionFlushesTheWaitingValue() {
        let scheduler = TestScheduler()
        let recorder = EventRecorder<Int, Never>()
        Signal<Int, Never>(values: [1, 2]).debounce(.seconds(1), on: scheduler).start(recorder.observer)
        scheduler.advance()
        expectEqual(recorder.events, [.value(2), .completed])
        scheduler.run()
        expectEqual(recorder.events, [.value(2), .completed])
    }

    @Test func failureDiscardsTheWaitingValue() {
        let scheduler = TestScheduler()
        let recorder = EventRecorder<Int, TestError>()
        Signal<Int, TestError>(value: 1).then(Signal(error: .boom)).debounce(.seconds(1), on: scheduler)
            .start(recorder.observer)
        scheduler.run()
        expectEqual(recorder.events, [.failed(.boom)])
    }
}
