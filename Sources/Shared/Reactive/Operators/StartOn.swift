import ContextBusSupport

extension Signal {
    /// Starts the signal's producer on `scheduler` (RAC's `subscribeOn:`); events then come from wherever the
    /// producer sends them.
    ///
    /// If the run is disposed before the scheduler gets to it, the producer never runs and the observer
    /// receives `interrupted` at once.
    public func start(on scheduler: any Scheduler) -> Signal {
        Signal(deliverySchedulers: deliverySchedulers + [scheduler]) { observer, lifetime in
            let claimed = AtomicFlag()
            lifetime.observeEnded {
                if claimed.setOnce() { observer.sendInterrupted() }
            }
            lifetime += scheduler.schedule {
                if claimed.setOnce() { self.run(observer, lifetime) }
            }
        }
    }
}
