/// Why waiting for a signal's first value (`first()`, `value`) produced no value.
public enum SignalWaitError<Failure: Error>: Error, CustomStringConvertible {
    /// The signal failed before sending a value.
    case failed(Failure)
    /// The signal completed without sending a value.
    case completedWithoutValue
    /// The signal was interrupted (disposed, or the waiting task was cancelled) before sending a value.
    case interrupted
    /// Waiting would block the thread of a scheduler the signal needs to make progress, so it would never end.
    /// Nothing was waited for; the signal was started and then disposed.
    case wouldDeadlock(scheduler: String)

    public var description: String {
        switch self {
        case .failed(let error): return "the signal failed: \(error)"
        case .completedWithoutValue: return "the signal completed without sending a value"
        case .interrupted: return "the signal was interrupted before sending a value"
        case .wouldDeadlock(let scheduler):
            return "waiting on \(scheduler) for a signal that delivers on it would deadlock"
        }
    }

    /// The signal's own error, if it failed.
    public var failure: Failure? {
        if case .failed(let error) = self { return error }
        return nil
    }
}

extension SignalWaitError: Equatable where Failure: Equatable {}
