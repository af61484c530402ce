import ContextBusSupport

extension Signal {
    /// Passes on a value only after `interval` has passed without a newer value, on `scheduler`.
    ///
    /// On completion a value still waiting is sent at once, then `completed`; failure and interruption are
    /// delivered on `scheduler` without delay and discard a waiting value.
    public func debounce(_ interval: Duration, on scheduler: any Scheduler) -> Signal {
        Signal(deliverySchedulers: deliverySchedulers + [scheduler]) { observer, lifetime in
            let state = Locked(DebounceState<Value>())
            let timer = SerialDisposable()
            lifetime += timer
            let output = ScheduledOutput(observer, on: scheduler, lifetime: lifetime)

            self.run(
                Observer(
                    value: { value in
                        let generation = state.withLock { state -> UInt64 in
                            state.pending = value
                            state.generation += 1
                            return state.generation
                        }
                        timer.inner = scheduler.schedule(after: interval) {
                            let value = state.withLock { state -> Value? in
                                guard state.generation == generation else { return nil }
                                defer { state.pending = nil }
                                return state.pending
                            }
                            if let value { output.deliver(.value(value)) }
                        }
                    },
                    termination: { termination in
                        let pending = state.withLock { state -> Value? in
                            state.generation += 1
                            defer { state.pending = nil }
                            return state.pending
                        }
                        timer.dispose()
                        if case .completed = termination, let pending {
                            scheduler.schedule {
                                output.deliver(.value(pending))
                                output.deliver(.completed)
                            }
                        } else {
                            output.schedule(termination.event())
                        }
                    }), lifetime)
        }
    }
}

private struct DebounceState<Value> {
    var pending: Value?
    var generation: UInt64 = 0
}
