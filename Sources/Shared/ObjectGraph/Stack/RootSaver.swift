import ContextBusReactive
import ContextBusSupport

/// Writes a `ContextStack`'s root to its store in the background: `delay` after the first child
/// save that left the root with unsaved changes, in one store transaction for everything that
/// arrived meanwhile. Failures go to `failures`.
final class RootSaver: Sendable {
    private struct State {
        var pending: (any Disposable)?
        var isScheduled = false
        var isStopped = false
        var generation = 0
    }

    let failures = Broadcaster<RootSaveFailure>()
    private let root: ObjectContext
    private let delay: Duration
    private let timer: any Scheduler
    private let state = Locked(State())

    init(root: ObjectContext, delay: Duration, timer: any Scheduler) {
        self.root = root
        self.delay = delay
        self.timer = timer
    }

    /// A child saved into the root: schedule a background save unless one is already waiting.
    func rootHasChanges() {
        let generation = state.withLock { state -> Int? in
            guard !state.isStopped, !state.isScheduled else { return nil }
            state.isScheduled = true
            state.generation += 1
            return state.generation
        }
        guard let generation else { return }
        let pending = timer.schedule(after: delay) { [weak self] in self?.fire(generation) }
        let stale = state.withLock { state -> Bool in
            guard state.generation == generation, state.isScheduled else { return true }
            state.pending = pending
            return false
        }
        if stale { pending.dispose() }
    }

    /// Drops a waiting background save (a save on demand is about to write everything).
    func cancelPending() {
        let pending = state.withLock { state -> (any Disposable)? in
            state.isScheduled = false
            defer { state.pending = nil }
            return state.pending
        }
        pending?.dispose()
    }

    /// Stops background saving for good.
    func stop() {
        state.withLock { $0.isStopped = true }
        cancelPending()
    }

    private func fire(_ generation: Int) {
        let current = state.withLock { state -> Bool in
            guard state.generation == generation, state.isScheduled, !state.isStopped else { return false }
            state.isScheduled = false
            state.pending = nil
            return true
        }
        guard current else { return }
        let root = self.root
        let failures = self.failures
        root.perform {
            do {
                try root.save()
            } catch {
                failures.send(RootSaveFailure(error: error, unsavedObjects: root.core.changed.count))
            }
        }
    }
}
