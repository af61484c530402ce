import TestSupport
import Testing

@testable import ContextBusReactive

struct CollectTests {
    @Test func collectSendsAllValuesOnCompletion() {
        let recorder = EventRecorder<[Int], Never>()
        Signal<Int, Never>(values: [3, 1, 2]).collect().start(recorder.observer)
        expectEqual(recorder.events, [.value([3, 1, 2]), .completed])
    }

    @Test func collectOfNothingIsAnEmptyArray() {
        let recorder = EventRecorder<[Int], Never>()
        Signal<Int, Never>.empty.collect().start(recorder.observer)
        expectEqual(recorder.events, [.value([]), .completed])
    }

    @Test func collectDiscardsValuesOnFailure() {
        let recorder = EventRecorder<[Int], TestError>()
        Signal<Int, TestError>(value: 1).then(Signal(error: .boom)).collect().start(recorder.observer)
        expectEqual(recorder.events, [.failed(.boom)])
    }

    @Test func reduceCombinesValues() {
        let recorder = EventRecorder<Int, Never>()
        Signal<Int, Never>(values: 1...4).reduce(10, +).start(recorder.observer)
        expectEqual(recorder.events, [.value(20), .completed])
    }

    @Test func reduceIsPerStart() {
        let signal = Signal<Int, Never>(values: 1...3).reduce(0, +)
        let first = EventRecorder<Int, Never>()
        let second = EventRecorder<Int, Never>()
        signal.start(first.observer)
        signal.start(second.observer)
        expectEqual(first.values, [6])
        expectEqual(second.values, [6])
    }
}
