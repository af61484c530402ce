import TestSupport
import Testing

@testable import ContextBusReactive

struct MapTests {
    @Test func mapTransformsEachValue() {
        let recorder = EventRecorder<String, Never>()
        Signal<Int, Never>(values: [1, 2]).map { "#\($0)" }.start(recorder.observer)
        expectEqual(recorder.events, [.value("#1"), .value("#2"), .completed])
    }

    @Test func compactMapDropsNils() {
        let recorder = EventRecorder<Int, Never>()
        Signal<String, Never>(values: ["1", "x", "3"]).compactMap { Int($0) }.start(recorder.observer)
        expectEqual(recorder.events, [.value(1), .value(3), .completed])
    }

    @Test func attemptMapFailsOnTheFirstErrorAndStopsTransforming() {
        let calls = Counter()
        let recorder = EventRecorder<Int, TestError>()
        Signal<Int, TestError>(values: [1, 2, 3, 4])
            .attemptMap { value throws(TestError) -> Int in
                calls.increment()
                if value == 2 { throw .numbered(value) }
                return value * 10
            }
            .start(recorder.observer)
        expectEqual(recorder.events, [.value(10), .failed(.numbered(2))])
        expectEqual(calls.value, 2)
    }

    @Test func mapErrorTransformsTheFailure() {
        let recorder = EventRecorder<Int, TestError>()
        Signal<Int, TestError>(error: .boom).mapError { _ in TestError.numbered(1) }.start(recorder.observer)
        expectEqual(recorder.events, [.failed(.numbered(1))])
    }

    @Test func promoteErrorKeepsValuesAndCompletion() {
        let recorder = EventRecorder<Int, TestError>()
        Signal<Int, Never>(value: 1).promoteError(TestError.self).start(recorder.observer)
        expectEqual(recorder.events, [.value(1), .completed])
    }
}
