extension Signal {
    /// Replaces a failure with the signal `handler` returns for its error (RAC's `catch:`).
    ///
    /// Values before the failure are passed on; after it, the replacement's events are. Completion and
    /// interruption of the original signal are passed on unchanged.
    public func flatMapError<NewFailure: Error>(
        _ handler: @escaping @Sendable (Failure) -> Signal<Value, NewFailure>
    ) -> Signal<Value, NewFailure> {
        Signal<Value, NewFailure>(deliverySchedulers: deliverySchedulers, trusted: { observer, lifetime in
            self.startNested(
                in: lifetime,
                Observer(
                    value: observer.valueAction,
                    termination: { termination in
                        switch termination {
                        case .failed(let error): handler(error).run(observer, lifetime)
                        case .completed: observer.sendCompleted()
                        case .interrupted: observer.sendInterrupted()
                        }
                    }))
        })
    }
}
