import Dispatch
import TestSupport
import Testing

@testable import ContextBusReactive
@testable import ContextBusSupport

/// Inner signals made with `Signal { observer, lifetime in … }`, which `flatMap` runs behind its own drain
/// (`FlattenedRun`), keeping what they send during their start and reusing a run whose observer nobody kept.
struct FlatMapProducerInnerTests {
    @Test func aSynchronousInnerProducerSendingSeveralValuesDeliversThemAllInOrder() {
        let recorder = EventRecorder<Int, Never>()
        Signal<Int, Never>(values: 0..<3)
            .flatMap(.concat) { value in
                Signal { observer, _ in
                    for offset in 0..<3 { observer.send(value: value * 10 + offset) }
                    observer.sendCompleted()
                }
            }
            .start(recorder.observer)
        expectEqual(recorder.events, [0, 1, 2, 10, 11, 12, 20, 21, 22].map { .value($0) } + [.completed])
    }

    @Test func anInnerProducerThatKeepsItsObserverCannotSendIntoLaterInnerSignals() {
        let kept = Locked<Observer<Int, Never>?>(nil)
        let later = Locked<Observer<Int, Never>?>(nil)
        let recorder = EventRecorder<Int, Never>()
        Signal<Int, Never>(values: 0..<3)
            .flatMap(.concat) { value in
                Signal { observer, _ in
                    switch value {
                    case 0:
                        kept.withLock { $0 = observer }
                        observer.send(value: 0)
                        observer.sendCompleted()
                    case 1:
                        observer.send(value: 1)
                        observer.sendCompleted()
                    default:
                        later.withLock { $0 = observer }  // still running
                    }
                }
            }
            .start(recorder.observer)
        kept.withLock { $0 }?.send(value: 99)
        kept.withLock { $0 }?.sendCompleted()
        expectEqual(recorder.events, [.value(0), .value(1)])
        later.withLock { $0 }?.send(value: 2)
        later.withLock { $0 }?.sendCompleted()
        expectEqual(recorder.events, [.value(0), .value(1), .value(2), .completed])
    }

    @Test func anInnerProducerThatKeepsItsLifetimeSeesItEndedAfterItCompleted() {
        let kept = Locked<Lifetime?>(nil)
        let endedWhileLaterRan = Locked<[Bool]>([])
        Signal<Int, Never>(values: 0..<4)
            .flatMap(.concat) { value in
                Signal { observer, lifetime in
                    if value == 0 { kept.withLock { $0 = lifetime } }
                    if let first = kept.withLock({ $0 }), value > 0 {
                        endedWhileLaterRan.withLock { $0.append(first.hasEnded) }
                    }
                    expectTrue(!lifetime.hasEnded)
                    observer.send(value: value)
                    observer.sendCompleted()
                }
            }
            .start(Observer())
        expectEqual(endedWhileLaterRan.withLock { $0 }, [true, true, true])
    }

    @Test func anInnerProducersCleanupRunsBeforeTheNextInnerSignalStarts() {
        let log = Locked<[String]>([])
        let recorder = EventRecorder<Int, Never>()
        Signal<Int, Never>(values: 0..<3)
            .flatMap(.concat) { value in
                Signal { observer, lifetime in
                    log.withLock { $0.append("start \(value)") }
                    lifetime.observeEnded { log.withLock { $0.append("cleanup \(value)") } }
                    observer.send(value: value)
                    observer.sendCompleted()
                }
            }
            .start(
                Observer(
                    value: { recorder.observer.send(value: $0) },
                    completed: {
                        log.withLock { $0.append("completed") }
                        recorder.observer.sendCompleted()
                    }))
        expectEqual(
            log.withLock { $0 },
            ["start 0", "cleanup 0", "start 1", "cleanup 1", "start 2", "cleanup 2", "completed"])
        expectEqual(recorder.events, [.value(0), .value(1), .value(2), .completed])
    }

    @Test func innerProducersSendingFromOtherThreadsAreDeliveredInOrder() {
        let recorder = EventRecorder<Int, Never>()
        Signal<Int, Never>(values: 0..<200)
            .flatMap(.concat) { value in
                Signal { observer, _ in
                    runOnNewThread {
                        observer.send(value: value)
                        observer.sendCompleted()
                    }
                }
            }
            .start(recorder.observer)
        #expect(recorder.waitForTermination())
        expectEqual(recorder.events, (0..<200).map { .value($0) } + [.completed])
    }

    @Test func disposingAfterInnerProducersCompletedInterruptsTheRunningOne() {
        let interrupted = Counter()
        let recorder = EventRecorder<Int, Never>()
        let disposable = Signal<Int, Never>(values: 0..<4)
            .flatMap(.concat) { value in
                Signal { observer, lifetime in
                    guard value == 3 else {
                        observer.send(value: value)
                        observer.sendCompleted()
                        return
                    }
                    lifetime.observeEnded { interrupted.increment() }
                }
            }
            .start(recorder.observer)
        expectEqual(recorder.events, [.value(0), .value(1), .value(2)])
        disposable.dispose()
        expectEqual(interrupted.value, 1)
        expectEqual(recorder.events, [.value(0), .value(1), .value(2), .interrupted])
    }

    @Test func anInnerProducerDisposingTheWholeRunStopsTheInnerSignalsAfterIt() {
        let whole = Locked<(any Disposable)?>(nil)
        let starts = Locked<[Int]>([])
        let recorder = EventRecorder<Int, Never>()
        // The outer values arrive one at a time, after `start` returned its disposable.
        let outer = Locked<Observer<Int, Never>?>(nil)
        whole.withLock { disposable in
            disposable = Signal<Int, Never> { observer, _ in outer.withLock { $0 = observer } }
                .flatMap(.concat) { value in
                    Signal { observer, _ in
                        starts.withLock { $0.append(value) }
                        if value == 2 { whole.withLock { $0 }?.dispose() }
                        observer.send(value: value)
                        observer.sendCompleted()
                    }
                }
                .start(recorder.observer)
        }
        let send = outer.withLock { $0! }
        for value in 0..<5 { send.send(value: value) }
        expectEqual(starts.withLock { $0 }, [0, 1, 2])
        expectEqual(recorder.events, [.value(0), .value(1), .interrupted])
    }

    @Test func mergeOfInnerProducersDeliversEveryValue() {
        let pending = Locked<[Observer<Int, Never>]>([])
        let recorder = EventRecorder<Int, Never>()
        Signal<Int, Never>(values: 0..<6)
            .flatMap(.merge) { value in
                Signal { observer, _ in
                    if value.isMultiple(of: 2) {
                        observer.send(value: value)
                        observer.sendCompleted()
                    } else {
                        pending.withLock { $0.append(observer) }
                    }
                }
            }
            .start(recorder.observer)
        expectEqual(recorder.values, [0, 2, 4])
        for (offset, observer) in pending.withLock({ $0 }).enumerated().reversed() {
            observer.send(value: 2 * offset + 1)
            observer.sendCompleted()
        }
        expectEqual(recorder.events, [0, 2, 4, 5, 3, 1].map { .value($0) } + [.completed])
    }

    /// Something the observer holds, to see whether a finished run still holds the observer.
    final class Token: Sendable {}

    @Test func aCompletedFlatMapOfInnerProducersLetsGoOfItsObserver() {
        weak var released: Token?
        do {
            let token = Token()
            released = token
            Signal<Int, Never>(values: 0..<3)
                .flatMap(.concat) { value in
                    Signal { observer, _ in
                        observer.send(value: value)
                        observer.sendCompleted()
                    }
                }
                .start(Observer(value: { _ in _ = token }))
        }
        expectNil(released)
    }

    @Test func aDisposedFlatMapOfInnerProducersLetsGoOfItsObserver() {
        weak var released: Token?
        do {
            let token = Token()
            released = token
            let disposable = Signal<Int, Never>(values: 0..<3)
                .flatMap(.concat) { value in
                    Signal { observer, _ in
                        guard value < 2 else { return }  // the last one never ends by itself
                        observer.send(value: value)
                        observer.sendCompleted()
                    }
                }
                .start(Observer(value: { _ in _ = token }))
            disposable.dispose()
        }
        expectNil(released)
    }
}
