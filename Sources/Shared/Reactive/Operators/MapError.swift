extension Signal {
    /// Transforms the error of a failure.
    public func mapError<NewFailure: Error>(
        _ transform: @escaping @Sendable (Failure) -> NewFailure
    ) -> Signal<Value, NewFailure> {
        lifted { observer, _ in
            Observer(value: observer.valueAction, termination: { observer.send($0.mapError(transform)) })
        }
    }
}

extension Signal where Failure == Never {
    /// The same signal, typed as able to fail with `NewFailure` (it never does).
    public func promoteError<NewFailure: Error>(_: NewFailure.Type = NewFailure.self) -> Signal<Value, NewFailure> {
        lifted { observer, _ in
            Observer(
                value: observer.valueAction,
                termination: { termination in
                    switch termination {
                    case .completed: observer.sendCompleted()
                    case .interrupted: observer.sendInterrupted()
                    }
                })
        }
    }
}
