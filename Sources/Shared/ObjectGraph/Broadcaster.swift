import ContextBusSupport

/// A list of observers that receive every value sent, from any thread.
///
/// Observers are called outside the lock, in the order they were added, on the sender's thread.
final class Broadcaster<Value: Sendable>: Sendable {
    private struct State {
        var nextToken = 0
        var observers: [(token: Int, observer: @Sendable (Value) -> Void)] = []
    }

    private let state = Locked(State())

    init() {}

    /// Adds `observer`; the returned observation removes it when cancelled or released.
    func add(_ observer: @escaping @Sendable (Value) -> Void) -> StoreObservation {
        let token = state.withLock { state in
            state.nextToken += 1
            state.observers.append((state.nextToken, observer))
            return state.nextToken
        }
        return StoreObservation { [weak self] in
            self?.state.withLock { state in state.observers.removeAll { $0.token == token } }
        }
    }

    /// Sends `value` to every observer registered when the call starts.
    func send(_ value: Value) {
        let observers = state.withLock { $0.observers.map(\.observer) }
        for observer in observers { observer(value) }
    }

    /// Whether anyone is listening.
    var hasObservers: Bool { state.withLock { !$0.observers.isEmpty } }
}
