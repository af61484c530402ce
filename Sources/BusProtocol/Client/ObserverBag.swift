import ContextBusReactive
import ContextBusSupport

/// A set of observers that are sent the same values, until the bag completes. Observers are called on the
/// sending thread, never under the bag's lock.
final class ObserverBag<Value: Sendable>: Sendable {
    private struct State {
        var observers: [UInt64: Observer<Value, Never>] = [:]
        var nextKey: UInt64 = 0
        var isCompleted = false
    }

    private let state = Locked(State())

    /// Adds `observer`; `nil` when the bag has completed (the observer is then completed at once).
    func add(_ observer: Observer<Value, Never>) -> UInt64? {
        let key = state.withLock { state -> UInt64? in
            guard !state.isCompleted else { return nil }
            state.nextKey += 1
            state.observers[state.nextKey] = observer
            return state.nextKey
        }
        if key == nil { observer.sendCompleted() }
        return key
    }

    func remove(_ key: UInt64) {
        _ = state.withLock { $0.observers.removeValue(forKey: key) }
    }

    var isEmpty: Bool { state.withLock { $0.observers.isEmpty } }

    func send(_ value: Value) {
        let observers = state.withLock { Array($0.observers.values) }
        for observer in observers { observer.send(value: value) }
    }

    /// Completes every observer; later additions complete at once.
    func complete() {
        let observers = state.withLock { state -> [Observer<Value, Never>] in
            guard !state.isCompleted else { return [] }
            state.isCompleted = true
            defer { state.observers = [:] }
            return Array(state.observers.values)
        }
        for observer in observers { observer.sendCompleted() }
    }

    /// A signal that observes this bag while it is started.
    func signal() -> Signal<Value, Never> {
        Signal { [self] observer, lifetime in
            guard let key = add(observer) else { return }
            lifetime.observeEnded { [self] in remove(key) }
        }
    }
}
