import ContextBusSupport

/// The weak table of a `ContextStack`'s workers: a worker that is released disappears from it.
final class WorkerDirectory: Sendable {
    private struct Entry {
        weak var context: ObjectContext?
    }

    private struct State {
        var entries: [Entry] = []
        var made = 0
    }

    private let state = Locked(State())

    /// A default name for the next worker: `worker-1`, `worker-2`, …
    func nextName() -> String {
        state.withLock { state in
            state.made += 1
            return "worker-\(state.made)"
        }
    }

    /// Adds `context` (weakly) and drops entries whose context is gone.
    func add(_ context: ObjectContext) {
        state.withLock { state in
            state.entries.removeAll { $0.context == nil }
            state.entries.append(Entry(context: context))
        }
    }

    /// The contexts still alive, in the order they were added.
    var live: [ObjectContext] {
        state.withLock { state in
            state.entries.removeAll { $0.context == nil }
            return state.entries.compactMap(\.context)
        }
    }
}
