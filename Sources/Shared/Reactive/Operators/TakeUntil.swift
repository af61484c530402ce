extension Signal {
    /// Passes on events until `trigger` sends a value or completes, then completes (and stops the upstream).
    ///
    /// If `trigger` fires while the signal is starting, the upstream is not started at all.
    public func take<Trigger: Sendable>(until trigger: Signal<Trigger, Never>) -> Signal {
        Signal(deliverySchedulers: deliverySchedulers) { observer, lifetime in
            let gate = EventGate(observer)
            lifetime += gate
            trigger.startNested(
                in: lifetime,
                Observer(
                    value: { _ in gate.send(.completed) },
                    termination: { termination in
                        if case .completed = termination { gate.send(.completed) }
                    }))
            guard !gate.isDisposed else { return }
            self.run(gate.observer, lifetime)
        }
    }

    /// Passes on events until `lifetime` ends, then completes (and stops the upstream).
    public func take(during lifetime: Lifetime) -> Signal {
        take(until: Signal<Void, Never> { observer, signalLifetime in
            signalLifetime += lifetime.observeEnded { observer.sendCompleted() }
        })
    }
}
