import Dispatch
import Foundation
import Synchronization

@testable import ContextBusReactive
@testable import ContextBusSupport

/// An error for tests.
enum TestError: Error, Equatable, Sendable {
    case boom
    case timedOut
    case numbered(Int)
}

/// Records the events a started signal delivers, from any thread.
final class EventRecorder<Value: Sendable, Failure: Error>: Sendable {
    private let recorded = Locked<[Event<Value, Failure>]>([])
    private let terminated = DispatchSemaphore(value: 0)

    var observer: Observer<Value, Failure> {
        Observer { [self] event in
            recorded.withLock { $0.append(event) }
            if event.isTerminating { terminated.signal() }
        }
    }

    var events: [Event<Value, Failure>] { recorded.withLock { $0 } }

    var values: [Value] { events.compactMap(\.value) }

    var terminalEvents: [Event<Value, Failure>] { events.filter(\.isTerminating) }

    /// Waits (bounded, so that a bug fails the test instead of hanging it) for the first terminal event.
    func waitForTermination(seconds: Int = patienceSeconds) -> Bool {
        terminated.wait(timeout: .now() + .seconds(seconds)) == .success
    }
}

/// Counts calls from any thread.
final class Counter: Sendable {
    private let count = Atomic<Int>(0)

    func increment() {
        count.wrappingAdd(1, ordering: .relaxed)
    }

    var value: Int { count.load(ordering: .relaxed) }
}

/// How long a test waits for something that must happen before it fails instead of hanging. Generous:
/// only a failing test waits this long, and under a loaded CI machine (the whole suite in parallel on two
/// cores, with libdispatch adding worker threads slowly) a step that takes milliseconds alone has taken
/// more than 10 s.
let patienceSeconds = 60
let patience: DispatchTimeInterval = .seconds(patienceSeconds)

/// Waits on a semaphore for at most `seconds`; returns whether it was signalled.
func wait(_ semaphore: DispatchSemaphore, seconds: Int = patienceSeconds) -> Bool {
    semaphore.wait(timeout: .now() + .seconds(seconds)) == .success
}

/// Waits on a semaphore from async code without blocking a thread of the cooperative pool (which has as few
/// threads as the machine has cores, and which the tasks under test need).
func waitAsync(_ semaphore: DispatchSemaphore, seconds: Int = patienceSeconds) async -> Bool {
    await withLockedContinuation { continuation in
        runOnNewThread { continuation.resume(returning: wait(semaphore, seconds: seconds)) }
    }
}

/// Runs `work` on a thread of its own (a new serial queue, which dispatch backs with an overcommitting worker).
///
/// Tests use this rather than `DispatchQueue.global()`, whose pool is limited to about one thread per core:
/// on a 2-core machine a spinning producer and a blocked waiter would starve every other test.
func runOnNewThread(_ work: @escaping @Sendable () -> Void) {
    DispatchQueue(label: "tests.thread").async(execute: work)
}

/// A lock-protected value for tests, on `NSLock` (a pthread mutex, which ThreadSanitizer understands; the
/// contended path of `Synchronization.Mutex` is invisible to it on Linux and produces false reports).
final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is only touched inside `withLock`.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
