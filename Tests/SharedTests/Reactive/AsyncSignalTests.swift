import Dispatch
import TestSupport
import Testing

@testable import ContextBusReactive
@testable import ContextBusSupport

struct AsyncSignalTests {
    @Test func valueAwaitsTheFirstValue() async throws {
        let value = try await Signal<Int, TestError>(values: [5, 6]).value
        expectEqual(value, 5)
    }

    @Test func valueThrowsTheSignalsFailure() async {
        await #expect(throws: SignalWaitError<TestError>.failed(.boom)) {
            try await Signal<Int, TestError>(error: .boom).value
        }
    }

    @Test(.timeLimit(.minutes(3))) func cancellingTheAwaitingTaskDisposesTheSignal() async {
        let cleaned = AsyncGate()
        let started = AsyncGate()
        let signal = Signal<Int, TestError> { _, lifetime in
            lifetime.observeEnded { cleaned.open() }
            started.open()
        }
        let task = Task { try await signal.value }
        await started.wait()
        task.cancel()
        await #expect(throws: SignalWaitError<TestError>.interrupted) { try await task.value }
        await cleaned.wait()
    }

    @Test func asyncOperationRunsPerStartAndSendsItsResult() async throws {
        let runs = Counter()
        let signal = Signal<Int, TestError> { () async throws(TestError) -> Int in
            runs.increment()
            return 42
        }
        expectEqual(runs.value, 0)
        try await expectEqual(signal.value, 42)
        try await expectEqual(signal.value, 42)
        expectEqual(runs.value, 2)
    }

    @Test func asyncOperationErrorFailsTheSignal() async {
        let signal = Signal<Int, TestError> { () async throws(TestError) -> Int in throw .boom }
        await #expect(throws: SignalWaitError<TestError>.failed(.boom)) { try await signal.value }
    }

    @Test(.timeLimit(.minutes(3))) func disposingCancelsTheOperationsTask() async {
        let cancelled = AsyncGate()
        let entered = AsyncGate()
        let recorder = EventRecorder<Int, Never>()
        let disposable = Signal<Int, Never> { () async -> Int in
            entered.open()
            await withTaskCancellationHandler {
                while !Task.isCancelled { await Task.yield() }
            } onCancel: {
                cancelled.open()
            }
            return 1
        }.start(recorder.observer)
        await entered.wait()
        disposable.dispose()
        await cancelled.wait()
        expectEqual(recorder.events, [.interrupted])
    }

    @Test func valuesStreamsEveryValue() async throws {
        var collected: [Int] = []
        for try await value in Signal<Int, TestError>(values: 1...4).values {
            collected.append(value)
        }
        expectEqual(collected, [1, 2, 3, 4])
    }

    @Test func valuesThrowsTheFailure() async {
        await #expect(throws: TestError.boom) {
            for try await _ in Signal<Int, TestError>(value: 1).then(Signal<Int, TestError>(error: .boom)).values {}
        }
    }

    @Test func leavingTheLoopEarlyDisposesTheSignal() async throws {
        let cleaned = DispatchSemaphore(value: 0)
        let sink = Locked<Observer<Int, Never>?>(nil)
        let signal = Signal<Int, Never> { observer, lifetime in
            lifetime.observeEnded { cleaned.signal() }
            sink.withLock { $0 = observer }
            observer.send(value: 1)
        }
        for try await value in signal.values {
            expectEqual(value, 1)
            break
        }
        #expect(await waitAsync(cleaned))
    }
}
