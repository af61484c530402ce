import Dispatch
import Synchronization
import TestSupport
import Testing

@testable import ContextBusReactive
@testable import ContextBusSupport

struct SignalTests {
    @Test func nothingRunsUntilStarted() {
        let runs = Counter()
        let signal = Signal<Int, Never> { observer, _ in
            runs.increment()
            observer.sendCompleted()
        }
        expectEqual(runs.value, 0)
        signal.start(Observer())
        expectEqual(runs.value, 1)
    }

    @Test func eachStartRunsTheProducerAgain() {
        let runs = Counter()
        let signal = Signal<Int, Never> { observer, _ in
            runs.increment()
            observer.send(value: runs.value)
            observer.sendCompleted()
        }
        let first = EventRecorder<Int, Never>()
        let second = EventRecorder<Int, Never>()
        signal.start(first.observer)
        signal.start(second.observer)
        expectEqual(first.events, [.value(1), .completed])
        expectEqual(second.events, [.value(2), .completed])
    }

    @Test func constantSignalsSendWhatTheyHold() {
        let value = EventRecorder<Int, TestError>()
        Signal(value: 7).start(value.observer)
        expectEqual(value.events, [.value(7), .completed])

        let error = EventRecorder<Int, TestError>()
        Signal(error: .boom).start(error.observer)
        expectEqual(error.events, [.failed(.boom)])

        let empty = EventRecorder<Int, TestError>()
        Signal.empty.start(empty.observer)
        expectEqual(empty.events, [.completed])

        let result = EventRecorder<Int, TestError>()
        Signal(result: .success(3)).start(result.observer)
        expectEqual(result.events, [.value(3), .completed])
    }

    @Test func valuesAreSentInOrderAndTheSequenceIsIteratedAnewEachStart() {
        let signal = Signal<Int, Never>(values: [1, 2, 3])
        let first = EventRecorder<Int, Never>()
        let second = EventRecorder<Int, Never>()
        signal.start(first.observer)
        signal.start(second.observer)
        expectEqual(first.events, [.value(1), .value(2), .value(3), .completed])
        expectEqual(second.events, first.events)
    }

    @Test func neverSendsNothingUntilDisposedThenInterrupts() {
        let recorder = EventRecorder<Int, Never>()
        let disposable = Signal<Int, Never>.never.start(recorder.observer)
        expectEmpty(recorder.events)
        disposable.dispose()
        expectEqual(recorder.events, [.interrupted])
    }

    @Test func misbehavingProducerCannotSendAfterATerminalEvent() {
        let recorder = EventRecorder<Int, TestError>()
        let sideEffects = Counter()
        Signal<Int, TestError> { observer, _ in
            observer.send(value: 1)
            observer.sendCompleted()
            observer.send(value: 2)
            observer.send(error: .boom)
            observer.sendInterrupted()
            observer.sendCompleted()
        }
        .on(value: { _ in sideEffects.increment() })
        .map { $0 * 10 }
        .start(recorder.observer)
        expectEqual(recorder.events, [.value(10), .completed])
        expectEqual(sideEffects.value, 1)
    }

    @Test func producerSendingAfterDisposalIsIgnored() {
        let recorder = EventRecorder<Int, Never>()
        let captured = Locked<Observer<Int, Never>?>(nil)
        let disposable = Signal<Int, Never> { observer, _ in
            captured.withLock { $0 = observer }
        }.start(recorder.observer)
        disposable.dispose()
        let observer = captured.withLock { $0 }
        observer?.send(value: 1)
        observer?.sendCompleted()
        expectEqual(recorder.events, [.interrupted])
    }

    @Test func disposingRunsCleanupExactlyOnceAndInterrupts() {
        let cleanups = Counter()
        let recorder = EventRecorder<Int, Never>()
        let disposable = Signal<Int, Never> { _, lifetime in
            lifetime.observeEnded { cleanups.increment() }
        }.start(recorder.observer)
        disposable.dispose()
        disposable.dispose()
        expectEqual(cleanups.value, 1)
        expectEqual(recorder.events, [.interrupted])
        expectTrue(disposable.isDisposed)
    }

    @Test func terminationRunsCleanupBeforeTheObserverSeesTheTerminalEvent() {
        let order = Locked<[String]>([])
        Signal<Int, Never> { observer, lifetime in
            lifetime.observeEnded { order.withLock { $0.append("cleanup") } }
            observer.sendCompleted()
        }.start(Observer(completed: { order.withLock { $0.append("completed") } }))
        expectEqual(order.withLock { $0 }, ["cleanup", "completed"])
    }

    @Test func disposalFromAnotherThreadMidChainStopsEverythingAndCleansUpOnce() {
        let cleanups = Counter()
        let innerStarts = Counter()
        let started = DispatchSemaphore(value: 0)
        let recorder = EventRecorder<Int, Never>()
        // A source that keeps sending from its own thread until its lifetime ends.
        let source = Signal<Int, Never> { observer, lifetime in
            lifetime.observeEnded { cleanups.increment() }
            runOnNewThread {
                var next = 0
                while !lifetime.hasEnded {
                    observer.send(value: next)
                    next += 1
                    if next == 100 { started.signal() }
                }
            }
        }
        let disposable =
            source
            .map { $0 + 1 }
            .flatMap(.concat) { value in
                Signal<Int, Never> { observer, _ in
                    innerStarts.increment()
                    observer.send(value: value)
                    observer.sendCompleted()
                }
            }
            .filter { $0 >= 0 }
            .start(recorder.observer)
        expectTrue(wait(started))
        let disposer = DispatchSemaphore(value: 0)
        runOnNewThread {
            disposable.dispose()
            disposer.signal()
        }
        expectTrue(wait(disposer))
        expectTrue(recorder.waitForTermination())
        let startsAtDisposal = innerStarts.value
        let eventsAtDisposal = recorder.events.count
        // Give a misbehaving implementation a chance to keep going; nothing may change.
        _ = DispatchSemaphore(value: 0).wait(timeout: .now() + .milliseconds(50))
        expectEqual(cleanups.value, 1)
        expectEqual(recorder.terminalEvents, [.interrupted])
        expectEqual(recorder.events.last, .interrupted)
        expectEqual(recorder.events.count, eventsAtDisposal)
        expectEqual(innerStarts.value, startsAtDisposal)
    }

    @Test func concurrentSendsAreSerialisedAndNeverOverlap() {
        let inside = Atomic<Int>(0)
        let overlaps = Counter()
        let received = Counter()
        let observer = Locked<Observer<Int, Never>?>(nil)
        let disposable = Signal<Int, Never> { sink, _ in observer.withLock { $0 = sink } }
            .start(
                Observer(value: { _ in
                    if inside.wrappingAdd(1, ordering: .acquiringAndReleasing).oldValue != 0 { overlaps.increment() }
                    received.increment()
                    inside.wrappingSubtract(1, ordering: .acquiringAndReleasing)
                }))
        let sink = observer.withLock { $0! }
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for value in 0..<2_000 { sink.send(value: thread * 10_000 + value) }
        }
        disposable.dispose()
        expectEqual(overlaps.value, 0)
        expectEqual(received.value, 16_000)
    }

    @Test func eventsSentFromAnObserverCallbackAreDeliveredAfterItReturnsNotNested() {
        let depth = Atomic<Int>(0)
        let maxDepth = Atomic<Int>(0)
        let order = Locked<[Int]>([])
        let sink = Locked<Observer<Int, Never>?>(nil)
        Signal<Int, Never> { observer, _ in
            sink.withLock { $0 = observer }
            observer.send(value: 1)
        }.start(
            Observer(value: { value in
                let now = depth.wrappingAdd(1, ordering: .relaxed).newValue
                if now > maxDepth.load(ordering: .relaxed) { maxDepth.store(now, ordering: .relaxed) }
                order.withLock { $0.append(value) }
                if value < 3 { sink.withLock { $0 }?.send(value: value + 1) }
                order.withLock { $0.append(-value) }
                depth.wrappingSubtract(1, ordering: .relaxed)
            }))
        expectEqual(maxDepth.load(ordering: .relaxed), 1)
        expectEqual(order.withLock { $0 }, [1, -1, 2, -2, 3, -3])
    }

    @Test func disposingFromInsideAValueCallbackDeliversInterruptedAfterTheCallback() {
        let order = Locked<[String]>([])
        let holder = SerialDisposable()
        let sink = Locked<Observer<Int, Never>?>(nil)
        holder.inner = Signal<Int, Never> { observer, _ in
            sink.withLock { $0 = observer }
        }.start(
            Observer(
                value: { value in
                    order.withLock { $0.append("value \(value) begin") }
                    holder.dispose()
                    order.withLock { $0.append("value \(value) end") }
                },
                interrupted: { order.withLock { $0.append("interrupted") } }))
        let observer = sink.withLock { $0! }
        observer.send(value: 1)
        observer.send(value: 2)
        expectEqual(order.withLock { $0 }, ["value 1 begin", "value 1 end", "interrupted"])
    }

    @Test func lazyRunsTheProducerOnTheSchedulerAtEachStart() {
        let scheduler = TestScheduler()
        let runs = Counter()
        let onScheduler = Counter()
        let signal = Signal<Int, Never>.lazy(on: scheduler) { observer, _ in
            runs.increment()
            if scheduler.isCurrent { onScheduler.increment() }
            observer.send(value: 1)
            observer.sendCompleted()
        }
        let recorder = EventRecorder<Int, Never>()
        signal.start(recorder.observer)
        signal.start(Observer())
        expectEqual(runs.value, 0)
        scheduler.advance()
        expectEqual(runs.value, 2)
        expectEqual(onScheduler.value, 2)
        expectEqual(recorder.events, [.value(1), .completed])
    }
}
