import ContextBusSupport

extension Signal {
    /// Passes on at most one value per `interval`, on `scheduler`: a value arriving sooner than `interval` after
    /// the last one sent is held, replaced by any newer value, and sent when the interval has passed.
    ///
    /// A terminal event is delivered on `scheduler` without delay; a value still held is then discarded.
    public func throttle(_ interval: Duration, on scheduler: any Scheduler) -> Signal {
        Signal(deliverySchedulers: deliverySchedulers + [scheduler]) { observer, lifetime in
            let state = Locked(ThrottleState<Value>())
            let timer = SerialDisposable()
            lifetime += timer
            let output = ScheduledOutput(observer, on: scheduler, lifetime: lifetime)

            @Sendable func sendHeld() {
                let value = state.withLock { state -> Value? in
                    guard !state.isTerminated, let held = state.held else { return nil }
                    state.held = nil
                    state.lastSent = scheduler.now
                    return held
                }
                if let value { output.deliver(.value(value)) }
            }
            self.run(
                Observer(
                    value: { value in
                        let due = state.withLock { state -> SchedulerTime? in
                            let isWaiting = state.held != nil
                            state.held = value
                            guard !isWaiting else { return nil }
                            return state.lastSent.map { $0 + interval } ?? scheduler.now
                        }
                        guard let due else { return }
                        timer.inner = scheduler.schedule(after: due, sendHeld)
                    },
                    termination: { termination in
                        state.withLock {
                            $0.isTerminated = true
                            $0.held = nil
                        }
                        timer.dispose()
                        output.schedule(termination.event())
                    }), lifetime)
        }
    }
}

private struct ThrottleState<Value> {
    var lastSent: SchedulerTime?
    var held: Value?
    var isTerminated = false
}
