extension Signal {
    /// Fails with `error` if the signal has not terminated within `interval` of being started.
    ///
    /// The timeout's failure is delivered on `scheduler`; it stops the upstream work like any terminal event.
    /// Values and the upstream's own terminal event pass through on their own thread.
    ///
    /// - Parameters:
    ///   - interval: how long the signal may run (negative counts as zero).
    ///   - error: the failure sent when time is up.
    ///   - scheduler: where the timer runs.
    public func timeout(after interval: Duration, raising error: Failure, on scheduler: any Scheduler) -> Signal {
        Signal(deliverySchedulers: deliverySchedulers + [scheduler]) { observer, lifetime in
            let gate = EventGate(observer)
            lifetime += gate
            lifetime += scheduler.schedule(after: interval) { gate.send(.failed(error)) }
            self.run(gate.observer, lifetime)
        }
    }
}
