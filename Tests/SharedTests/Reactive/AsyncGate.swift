@testable import ContextBusSupport

/// A one-shot gate that async tests await without a wall-clock bound and without holding a thread.
///
/// Tests that start a `Task` cannot promise when the cooperative pool (one thread per core, shared with every
/// test running in parallel) gets round to it, so waiting for it with a timeout makes a slow machine fail them.
/// Awaiting a gate suspends instead; a gate that never opens is caught by the test's time limit.
final class AsyncGate: Sendable {
    private struct State {
        var isOpen = false
        var waiters: [LockedContinuation<Void, Never>] = []
    }

    private let state = Locked(State())

    /// Opens the gate and resumes everyone waiting; later waits return at once.
    func open() {
        let waiters = state.withLock { state -> [LockedContinuation<Void, Never>] in
            state.isOpen = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Suspends until the gate is open.
    func wait() async {
        await withLockedContinuation { continuation in
            let isOpen = state.withLock { state -> Bool in
                if !state.isOpen { state.waiters.append(continuation) }
                return state.isOpen
            }
            if isOpen { continuation.resume() }
        }
    }
}
