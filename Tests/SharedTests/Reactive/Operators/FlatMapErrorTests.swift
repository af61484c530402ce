import TestSupport
import Testing

@testable import ContextBusReactive

struct FlatMapErrorTests {
    @Test func replacesAFailureWithTheHandlersSignal() {
        let recorder = EventRecorder<Int, Never>()
        Signal<Int, TestError>(value: 1).then(Signal<Int, TestError>(error: .numbered(7)))
            .flatMapError { error -> Signal<Int, Never> in
                guard case .numbered(let number) = error else { return .empty }
                return Signal(value: number)
            }
            .start(recorder.observer)
        expectEqual(recorder.events, [.value(7), .completed])
    }

    @Test func valuesBeforeTheFailureArePassedOn() {
        let recorder = EventRecorder<Int, Never>()
        Signal<Int, TestError> { observer, _ in
            observer.send(value: 1)
            observer.send(error: .boom)
        }
        .flatMapError { _ in Signal(value: 2) }
        .start(recorder.observer)
        expectEqual(recorder.events, [.value(1), .value(2), .completed])
    }

    @Test func thenIgnoresValuesAndRunsTheReplacementAfterCompletion() {
        let starts = Counter()
        let recorder = EventRecorder<String, TestError>()
        Signal<Int, TestError>(values: [1, 2])
            .then(
                Signal { observer, _ in
                    starts.increment()
                    observer.send(value: "next")
                    observer.sendCompleted()
                }
            )
            .start(recorder.observer)
        expectEqual(recorder.events, [.value("next"), .completed])
        expectEqual(starts.value, 1)
    }

    @Test func thenNeverStartsTheReplacementAfterAFailure() {
        let starts = Counter()
        let recorder = EventRecorder<Int, TestError>()
        Signal<Int, TestError>(error: .boom)
            .then(Signal<Int, TestError> { _, _ in starts.increment() })
            .start(recorder.observer)
        expectEqual(recorder.events, [.failed(.boom)])
        expectEqual(starts.value, 0)
    }
}
