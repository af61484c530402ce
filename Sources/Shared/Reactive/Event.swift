/// One event of a started `Signal`: any number of `value`s, then at most one terminal event.
///
/// `failed`, `completed` and `interrupted` are terminal: after one of them the started signal delivers
/// nothing more (see docs/ReactiveContracts.md).
public enum Event<Value: Sendable, Failure: Error>: Sendable {
    /// A value.
    case value(Value)
    /// The signal failed with an error. Terminal.
    case failed(Failure)
    /// The signal finished successfully. Terminal.
    case completed
    /// The signal was cancelled (its disposable was disposed) before it finished. Terminal.
    case interrupted

    /// Whether this event ends the signal.
    @inlinable
    public var isTerminating: Bool {
        if case .value = self { return false }
        return true
    }

    /// The value of a `value` event, otherwise nil.
    @inlinable
    public var value: Value? {
        if case .value(let value) = self { return value }
        return nil
    }

    /// The error of a `failed` event, otherwise nil.
    public var error: Failure? {
        if case .failed(let error) = self { return error }
        return nil
    }

    /// The same event with its value transformed.
    public func map<NewValue: Sendable>(_ transform: (Value) -> NewValue) -> Event<NewValue, Failure> {
        switch self {
        case .value(let value): return .value(transform(value))
        case .failed(let error): return .failed(error)
        case .completed: return .completed
        case .interrupted: return .interrupted
        }
    }

    /// The same event with its error transformed.
    public func mapError<NewFailure: Error>(_ transform: (Failure) -> NewFailure) -> Event<Value, NewFailure> {
        switch self {
        case .value(let value): return .value(value)
        case .failed(let error): return .failed(transform(error))
        case .completed: return .completed
        case .interrupted: return .interrupted
        }
    }
}

extension Event: Equatable where Value: Equatable, Failure: Equatable {}

extension Event: CustomStringConvertible {
    public var description: String {
        switch self {
        case .value(let value): return "value(\(value))"
        case .failed(let error): return "failed(\(error))"
        case .completed: return "completed"
        case .interrupted: return "interrupted"
        }
    }
}

/// The terminal events alone: how observers pass them on without wrapping values in an `Event`.
@usableFromInline
enum Termination<Failure: Error>: Sendable {
    case failed(Failure)
    case completed
    case interrupted

    @inlinable
    func event<Value: Sendable>(of _: Value.Type = Value.self) -> Event<Value, Failure> {
        switch self {
        case .failed(let error): return .failed(error)
        case .completed: return .completed
        case .interrupted: return .interrupted
        }
    }

    @inlinable
    func mapError<NewFailure: Error>(_ transform: (Failure) -> NewFailure) -> Termination<NewFailure> {
        switch self {
        case .failed(let error): return .failed(transform(error))
        case .completed: return .completed
        case .interrupted: return .interrupted
        }
    }
}
