import ContextBusSupport

/// SIGINT / SIGTERM as seen by a command: streaming commands register what stops them (closing
/// their client) and then end normally.
final class Interruption: Sendable {
    private struct State {
        var signal: Int32?
        var actions: [@Sendable (Int32) -> Void] = []
    }

    private let state = Locked(State())

    /// The signal that arrived, if one did.
    var signal: Int32? { state.withLock { $0.signal } }

    /// Records `signal` and runs the registered actions (once; later signals are ignored).
    func trigger(_ signal: Int32) {
        let actions = state.withLock { state -> [@Sendable (Int32) -> Void] in
            guard state.signal == nil else { return [] }
            state.signal = signal
            defer { state.actions = [] }
            return state.actions
        }
        for action in actions { action(signal) }
    }

    /// Runs `action` when a signal arrives, or now if one already has.
    func onInterrupt(_ action: @escaping @Sendable (Int32) -> Void) {
        let arrived = state.withLock { state -> Int32? in
            if let signal = state.signal { return signal }
            state.actions.append(action)
            return nil
        }
        if let arrived { action(arrived) }
    }
}
