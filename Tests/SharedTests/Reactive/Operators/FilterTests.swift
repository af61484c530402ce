import TestSupport
import Testing

@testable import ContextBusReactive

struct FilterTests {
    @Test func filterKeepsMatchingValues() {
        let recorder = EventRecorder<Int, Never>()
        Signal<Int, Never>(values: 1...6).filter { $0.isMultiple(of: 2) }.start(recorder.observer)
        expectEqual(recorder.events, [.value(2), .value(4), .value(6), .completed])
    }

    @Test func skipDropsTheFirstValues() {
        let recorder = EventRecorder<Int, Never>()
        Signal<Int, Never>(values: 1...4).skip(first: 2).start(recorder.observer)
        expectEqual(recorder.events, [.value(3), .value(4), .completed])
    }

    @Test func takeFirstCompletesAfterTheCountAndStopsTheUpstream() {
        let produced = Counter()
        let cleanups = Counter()
        let recorder = EventRecorder<Int, Never>()
        Signal<Int, Never> { observer, lifetime in
            lifetime.observeEnded { cleanups.increment() }
            for value in 1...100 {
                guard !lifetime.hasEnded else { return }
                produced.increment()
                observer.send(value: value)
            }
        }
        .take(first: 2)
        .start(recorder.observer)
        expectEqual(recorder.events, [.value(1), .value(2), .completed])
        expectEqual(produced.value, 2)
        expectEqual(cleanups.value, 1)
    }

    @Test(arguments: [0, -1, Int.min])
    func takeFirstOfNothingCompletesWithoutStartingTheUpstream(count: Int) {
        let starts = Counter()
        let recorder = EventRecorder<Int, Never>()
        Signal<Int, Never> { _, _ in starts.increment() }.take(first: count).start(recorder.observer)
        expectEqual(recorder.events, [.completed])
        expectEqual(starts.value, 0)
    }

    @Test func takeFirstPassesOnAnEarlierFailure() {
        let recorder = EventRecorder<Int, TestError>()
        Signal<Int, TestError>(error: .boom).take(first: 3).start(recorder.observer)
        expectEqual(recorder.events, [.failed(.boom)])
    }
}
