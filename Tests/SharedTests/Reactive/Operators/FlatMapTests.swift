import Dispatch
import TestSupport
import Testing

@testable import ContextBusReactive
@testable import ContextBusSupport

struct FlatMapTests {
    /// A signal that sends `value` when the test tells it to, and records its start.
    final class Step: Sendable {
        let started = Counter()
        let interrupted = Counter()
        private let sink = Locked<Observer<Int, TestError>?>(nil)

        var signal: Signal<Int, TestError> {
            Signal { [self] observer, lifetime in
                started.increment()
                sink.withLock { $0 = observer }
                lifetime.observeEnded { [self] in interrupted.increment() }
            }
        }

        func succeed(_ value: Int) {
            let observer = sink.withLock { $0 }
            observer?.send(value: value)
            observer?.sendCompleted()
        }

        func fail(_ error: TestError) {
            sink.withLock { $0 }?.send(error: error)
        }
    }

    @Test func concatRunsInnerSignalsOneAfterTheOther() {
        let steps = (0..<3).map { _ in Step() }
        let recorder = EventRecorder<Int, TestError>()
        Signal<Int, TestError>(values: 0..<3).flatMap(.concat) { steps[$0].signal }.start(recorder.observer)
        expectEqual(steps.map(\.started.value), [1, 0, 0])
        steps[0].succeed(10)
        expectEqual(steps.map(\.started.value), [1, 1, 0])
        steps[1].succeed(11)
        steps[2].succeed(12)
        expectEqual(recorder.events, [.value(10), .value(11), .value(12), .completed])
    }

    @Test func anErrorShortCircuitsAConcatChainAndLaterProducersNeverStart() {
        let steps = (0..<4).map { _ in Step() }
        let recorder = EventRecorder<Int, TestError>()
        Signal<Int, TestError>(values: 0..<4).flatMap(.concat) { steps[$0].signal }.start(recorder.observer)
        steps[0].succeed(10)
        steps[1].fail(.boom)
        steps[2].succeed(12)
        expectEqual(recorder.events, [.value(10), .failed(.boom)])
        expectEqual(steps.map(\.started.value), [1, 1, 0, 0])
    }

    @Test func aSynchronousErrorShortCircuitsAConcatChain() {
        let starts = Locked<[Int]>([])
        let recorder = EventRecorder<Int, TestError>()
        Signal<Int, TestError>(values: 0..<5)
            .flatMap(.concat) { index in
                Signal<Int, TestError> { observer, _ in
                    starts.withLock { $0.append(index) }
                    if index == 2 { observer.send(error: .numbered(index)) } else { observer.send(value: index) }
                    observer.sendCompleted()
                }
            }
            .start(recorder.observer)
        expectEqual(recorder.events, [.value(0), .value(1), .failed(.numbered(2))])
        expectEqual(starts.withLock { $0 }, [0, 1, 2])
    }

    @Test func concatOfManySynchronousInnerSignalsDoesNotRecurse() {
        let recorder = EventRecorder<Int, Never>()
        Signal<Int, Never>(values: 0..<20_000)
            .flatMap(.concat) { value in
                Signal { observer, _ in
                    observer.send(value: value)
                    observer.sendCompleted()
                }
            }
            .reduce(0) { count, _ in count + 1 }
            .start(recorder.observer)
        expectEqual(recorder.events, [.value(20_000), .completed])
    }

    @Test func concatWaitsForQueuedInnerSignalsBeforeCompleting() {
        let step = Step()
        let recorder = EventRecorder<Int, TestError>()
        Signal<Int, TestError>(values: [0, 1])
            .flatMap(.concat) { $0 == 0 ? step.signal : Signal(value: 5) }
            .start(recorder.observer)
        expectEmpty(recorder.events)
        step.succeed(1)
        expectEqual(recorder.events, [.value(1), .value(5), .completed])
    }

    @Test func mergeRunsInnerSignalsAtOnce() {
        let steps = (0..<3).map { _ in Step() }
        let recorder = EventRecorder<Int, TestError>()
        Signal<Int, TestError>(values: 0..<3).flatMap(.merge) { steps[$0].signal }.start(recorder.observer)
        expectEqual(steps.map(\.started.value), [1, 1, 1])
        steps[2].succeed(12)
        steps[0].succeed(10)
        expectEqual(recorder.events, [.value(12), .value(10)])
        steps[1].succeed(11)
        expectEqual(recorder.events, [.value(12), .value(10), .value(11), .completed])
    }

    @Test func mergeFailureInterruptsTheOthers() {
        let steps = (0..<3).map { _ in Step() }
        let recorder = EventRecorder<Int, TestError>()
        Signal<Int, TestError>(values: 0..<3).flatMap(.merge) { steps[$0].signal }.start(recorder.observer)
        steps[1].fail(.boom)
        expectEqual(recorder.events, [.failed(.boom)])
        expectEqual(steps[0].interrupted.value, 1)
        expectEqual(steps[2].interrupted.value, 1)
    }

    @Test func latestInterruptsThePreviousInnerSignal() {
        let steps = (0..<2).map { _ in Step() }
        let outer = Locked<Observer<Int, TestError>?>(nil)
        let recorder = EventRecorder<Int, TestError>()
        Signal<Int, TestError> { observer, _ in outer.withLock { $0 = observer } }
            .flatMap(.latest) { steps[$0].signal }
            .start(recorder.observer)
        let send = outer.withLock { $0! }
        send.send(value: 0)
        send.send(value: 1)
        expectEqual(steps[0].interrupted.value, 1)
        steps[0].succeed(10)
        steps[1].succeed(11)
        send.sendCompleted()
        expectEqual(recorder.events, [.value(11), .completed])
    }

    @Test func flattenFlattensASignalOfSignals() {
        let recorder = EventRecorder<Int, Never>()
        Signal<Signal<Int, Never>, Never>(values: [Signal(values: [1, 2]), Signal(value: 3)])
            .flatten(.concat)
            .start(recorder.observer)
        expectEqual(recorder.events, [.value(1), .value(2), .value(3), .completed])
    }

    @Test func disposingInterruptsTheRunningInnerSignal() {
        let step = Step()
        let recorder = EventRecorder<Int, TestError>()
        let disposable = Signal<Int, TestError>(value: 0).flatMap(.concat) { _ in step.signal }
            .start(recorder.observer)
        disposable.dispose()
        expectEqual(step.interrupted.value, 1)
        expectEqual(recorder.events, [.interrupted])
    }
}
