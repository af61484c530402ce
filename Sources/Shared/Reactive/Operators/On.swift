extension Signal {
    /// Runs side effects for the events of each start, before the events are passed on.
    ///
    /// - Parameters:
    ///   - starting: before the signal's producer runs.
    ///   - started: after the producer has run (returned from its closure).
    ///   - value: for each value.
    ///   - failed: on failure.
    ///   - completed: on completion.
    ///   - interrupted: on interruption.
    ///   - terminated: after `failed`, `completed` or `interrupted`, for whichever terminal event comes.
    ///   - disposed: when the run's lifetime ends (after any terminal event, or on disposal).
    public func on(
        starting: (@Sendable () -> Void)? = nil,
        started: (@Sendable () -> Void)? = nil,
        value: (@Sendable (Value) -> Void)? = nil,
        failed: (@Sendable (Failure) -> Void)? = nil,
        completed: (@Sendable () -> Void)? = nil,
        interrupted: (@Sendable () -> Void)? = nil,
        terminated: (@Sendable () -> Void)? = nil,
        disposed: (@Sendable () -> Void)? = nil
    ) -> Signal {
        Signal(deliverySchedulers: deliverySchedulers) { observer, lifetime in
            if let disposed { lifetime.observeEnded(disposed) }
            starting?()
            let send = observer.valueAction
            self.run(
                Observer(
                    value: { received in
                        value?(received)
                        send(received)
                    },
                    termination: { termination in
                        switch termination {
                        case .failed(let error): failed?(error)
                        case .completed: completed?()
                        case .interrupted: interrupted?()
                        }
                        terminated?()
                        observer.terminationAction(termination)
                    }), lifetime)
            started?()
        }
    }
}
