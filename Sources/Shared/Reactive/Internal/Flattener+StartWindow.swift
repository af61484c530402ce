import ContextBusSupport
import Synchronization

/// The start of an inner `Signal { observer, lifetime in … }` of `flatMap`, run by the flattener's drain on its
/// emitting thread (`FlattenedRun.start`).
///
/// Most such producers send their value and their terminal event at once, inside that call. Queued in the drain,
/// each event would take its lock twice and copy itself in and out of its ring buffer. Instead, while the start
/// runs, the flattener keeps the first value and the terminal event that the producer sends **on that thread**,
/// as long as nothing else waits in the drain; it handles them right after the producer returns, as the drain
/// would have handled them next. Anything else (a second value, an event sent while other inputs wait, an event
/// from another thread, an event after one that was queued) goes through the drain as before, so the order of
/// every input is the drain's.
extension Flattener {
    @usableFromInline
    struct StartWindow {
        /// The inner run being started.
        @usableFromInline
        var id: InnerID = 0
        @usableFromInline
        var value: Value?
        @usableFromInline
        var termination: Termination<Failure>?
        /// Set once an event of the start had to be queued: the ones after it are queued too.
        @usableFromInline
        var isQueueing = false

        @inlinable
        init() {}
    }

    /// Opens the window for the start of inner run `id`, on the drain's emitting thread.
    @inlinable
    func openStartWindow(for id: InnerID) {
        startWindow.id = id
        startWindow.isQueueing = false
        startingThread.store(CurrentThread.id, ordering: .relaxed)
    }

    /// Closes the window; returns what was kept.
    @inlinable
    func closeStartWindow() -> (value: Value?, termination: Termination<Failure>?) {
        startingThread.store(0, ordering: .relaxed)
        defer {
            startWindow.value = nil
            startWindow.termination = nil
        }
        return (startWindow.value, startWindow.termination)
    }

    /// Whether an event of inner run `id` sent now may be kept: it is sent during that run's start, on its thread,
    /// nothing of the start was queued before it, nothing else waits in the drain, and (for a value) no value is kept
    /// yet.
    @inlinable
    func mayKeepStartedEvent(of id: InnerID, isTerminal: Bool) -> Bool {
        // Another thread reads 0 or the emitter's id, never its own; the fields after it are the emitter's.
        guard startingThread.load(ordering: .relaxed) == CurrentThread.id, startWindow.id == id,
            !startWindow.isQueueing
        else { return false }
        guard drain.pending.load(ordering: .relaxed) == 1, isTerminal || startWindow.value == nil else {
            startWindow.isQueueing = true
            return false
        }
        return true
    }

    /// Keeps a value of inner run `id` sent during its start, if it may (`mayKeepStartedEvent`).
    @inlinable
    func keepsStartedValue(_ value: Value, of id: InnerID) -> Bool {
        guard mayKeepStartedEvent(of: id, isTerminal: false) else { return false }
        startWindow.value = value
        return true
    }

    /// Keeps the terminal event of inner run `id` sent during its start, if it may (`mayKeepStartedEvent`).
    @inlinable
    func keepsStartedTermination(_ termination: Termination<Failure>, of id: InnerID) -> Bool {
        guard mayKeepStartedEvent(of: id, isTerminal: true) else { return false }
        startWindow.termination = termination
        return true
    }
}
