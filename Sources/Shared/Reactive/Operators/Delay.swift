extension Signal {
    /// Delivers values and completion `interval` later, on `scheduler`; failure and interruption are delivered
    /// on `scheduler` without delay (later values are then dropped).
    ///
    /// Disposal cancels the values still waiting and delivers `interrupted` on `scheduler`.
    public func delay(_ interval: Duration, on scheduler: any Scheduler) -> Signal {
        Signal(deliverySchedulers: deliverySchedulers + [scheduler]) { observer, lifetime in
            // Only touched on `scheduler`, whose blocks run one at a time.
            let isTerminated = SerialBox(false)
            @Sendable func deliver(_ event: Event<Value, Failure>) {
                guard !isTerminated.value else { return }
                if event.isTerminating { isTerminated.value = true }
                observer.send(event)
            }
            @Sendable func deliverLater(_ event: Event<Value, Failure>) {
                let timer = SerialDisposable()
                guard let key = lifetime.disposables.insert(.disposable(timer)) else { return }
                timer.inner = scheduler.schedule(after: interval) {
                    lifetime.disposables.remove(key)
                    deliver(event)
                }
            }
            lifetime.observeEnded { scheduler.schedule { deliver(.interrupted) } }
            self.run(
                Observer(
                    value: { deliverLater(.value($0)) },
                    termination: { termination in
                        switch termination {
                        case .completed: deliverLater(.completed)
                        case .failed, .interrupted: scheduler.schedule { deliver(termination.event()) }
                        }
                    }), lifetime)
        }
    }
}
