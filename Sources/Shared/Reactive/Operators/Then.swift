extension Signal {
    /// Waits for this signal to complete, ignoring its values, then runs `replacement` (RAC's `then:`).
    ///
    /// A failure or interruption is passed on at once and `replacement` never starts.
    public func then<NewValue: Sendable>(_ replacement: Signal<NewValue, Failure>) -> Signal<NewValue, Failure> {
        Signal<NewValue, Failure>(
            deliverySchedulers: deliverySchedulers + replacement.deliverySchedulers,
            trusted: { observer, lifetime in
                self.startNested(
                    in: lifetime,
                    Observer(
                        value: { _ in },
                        termination: { termination in
                            switch termination {
                            case .completed: replacement.run(observer, lifetime)
                            case .failed(let error): observer.send(error: error)
                            case .interrupted: observer.sendInterrupted()
                            }
                        }))
            })
    }
}
