import Dispatch
import Foundation
@preconcurrency import Glibc
import Synchronization
import TestSupport
import Testing

@testable import ContextBusSupport

struct LockedContinuationTests {
    @Test func returnsTheValueItIsResumedWithFromAnotherThread() async {
        let made = await withLockedContinuation { continuation in
            Thread { continuation.resume(returning: Made(value: 42)) }.start()
        }
        expectEqual(made.value, 42)
    }

    @Test func throwsTheErrorItIsResumedWith() async {
        await #expect(throws: Refusal.self) {
            let _: Int = try await withLockedThrowingContinuation { continuation in
                Thread { continuation.resume(throwing: Refusal()) }.start()
            }
        }
    }

    @Test func returnsTheValueOfAResultResumedBeforeTheBodyReturns() async throws {
        let value: String = try await withLockedThrowingContinuation { continuation in
            continuation.resume(with: .success("at once"))
        }
        expectEqual(value, "at once")
    }

    /// Another thread builds the value and resumes before the task has suspended. The body waits for that resume
    /// with a relaxed atomic (no happens-before edge) on a thread of its own, never on the cooperative pool.
    @Test func handsOverAValueBuiltOnAnotherThreadThatResumedBeforeTheTaskSuspended() async {
        let executor = QueueTaskExecutor(label: "locked-continuation-tests.task")
        let made = await withTaskExecutorPreference(executor) {
            await withLockedContinuation { continuation in
                let resumed = RelaxedFlag()
                Thread {
                    continuation.resume(returning: Made(value: 7))
                    resumed.set()
                }.start()
                while !resumed.isSet { sched_yield() }
            }
        }
        expectEqual(made.value, 7)
    }
}

/// A value whose storage is written where it is made, on the resuming thread.
private final class Made: Sendable {
    let value: Int
    init(value: Int) { self.value = value }
}

private struct Refusal: Error {}

/// A flag read and written with relaxed ordering, which gives the thread sanitizer no happens-before edge.
private final class RelaxedFlag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .relaxed) }
    func set() { value.store(true, ordering: .relaxed) }
}

/// Runs a task's jobs on one serial queue: a thread of its own that a test may block.
private final class QueueTaskExecutor: TaskExecutor {
    private let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { [self] in job.runSynchronously(on: asUnownedTaskExecutor()) }
    }
}
