import TestSupport
import Testing

@testable import ContextBusReactive
@testable import ContextBusSupport

struct CombiningTests {
    /// A signal whose events the test sends by hand.
    private func makeManual() -> (Signal<Int, TestError>, @Sendable () -> Observer<Int, TestError>) {
        let sink = Locked<Observer<Int, TestError>?>(nil)
        let signal = Signal<Int, TestError> { observer, _ in sink.withLock { $0 = observer } }
        return (signal, { sink.withLock { $0! } })
    }

    @Test func combineLatestSendsPairsOnceBothHaveAValue() {
        let (a, sendA) = makeManual()
        let (b, sendB) = makeManual()
        let recorder = EventRecorder<String, TestError>()
        a.combineLatest(with: b).map { "\($0)\($1)" }.start(recorder.observer)
        sendA().send(value: 1)
        sendA().send(value: 2)
        sendB().send(value: 7)
        sendA().send(value: 3)
        sendA().sendCompleted()
        sendB().send(value: 8)
        expectEqual(recorder.values, ["27", "37", "38"])
        sendB().sendCompleted()
        expectEqual(recorder.events.last, .completed)
    }

    @Test func combineLatestCompletesWhenOneCompletesWithoutAValue() {
        let recorder = EventRecorder<[Int], TestError>()
        Signal<[Int], TestError>.combineLatest([Signal(values: [1, 2]), .empty, Signal.never])
            .start(recorder.observer)
        expectEqual(recorder.events, [.completed])
    }

    @Test func combineLatestFailureEndsIt() {
        let (a, sendA) = makeManual()
        let recorder = EventRecorder<(Int, Int), TestError>()
        a.combineLatest(with: Signal(error: .boom)).start(recorder.observer)
        sendA().send(value: 1)
        expectEqual(recorder.terminalEvents.count, 1)
        expectEqual(recorder.events.first?.error, .boom)
    }

    @Test func zipPairsValuesInOrder() {
        let (a, sendA) = makeManual()
        let recorder = EventRecorder<String, TestError>()
        a.zip(with: Signal(values: [10, 20, 30])).map { "\($0)-\($1)" }.start(recorder.observer)
        sendA().send(value: 1)
        sendA().send(value: 2)
        expectEqual(recorder.values, ["1-10", "2-20"])
        sendA().sendCompleted()
        expectEqual(recorder.events.last, .completed)
    }

    @Test func zipOfArraysCompletesWithTheShortest() {
        let recorder = EventRecorder<[Int], Never>()
        Signal<[Int], Never>.zip([Signal(values: [1, 2, 3]), Signal(values: [4, 5])]).start(recorder.observer)
        expectEqual(recorder.events, [.value([1, 4]), .value([2, 5]), .completed])
    }

    @Test func mergePassesOnValuesFromAllAndCompletesWhenAllHave() {
        let (a, sendA) = makeManual()
        let recorder = EventRecorder<Int, TestError>()
        a.merge(with: Signal(values: [1, 2])).start(recorder.observer)
        sendA().send(value: 9)
        expectEqual(recorder.events, [.value(1), .value(2), .value(9)])
        sendA().sendCompleted()
        expectEqual(recorder.events.last, .completed)
    }

    @Test func takeUntilCompletesWhenTheTriggerFires() {
        let (a, sendA) = makeManual()
        let trigger = Locked<Observer<Void, Never>?>(nil)
        let recorder = EventRecorder<Int, TestError>()
        a.take(until: Signal<Void, Never> { observer, _ in trigger.withLock { $0 = observer } })
            .start(recorder.observer)
        sendA().send(value: 1)
        trigger.withLock { $0 }?.send(value: ())
        sendA().send(value: 2)
        expectEqual(recorder.events, [.value(1), .completed])
    }

    @Test func takeUntilAnImmediateTriggerNeverStartsTheUpstream() {
        let starts = Counter()
        let recorder = EventRecorder<Int, Never>()
        Signal<Int, Never> { _, _ in starts.increment() }
            .take(until: Signal<Int, Never>(value: 0))
            .start(recorder.observer)
        expectEqual(recorder.events, [.completed])
        expectEqual(starts.value, 0)
    }
}
