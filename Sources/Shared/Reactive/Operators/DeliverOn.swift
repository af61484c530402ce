import ContextBusSupport

extension Signal {
    /// Delivers every event on `scheduler` (RAC's `deliverOn:`), in order.
    ///
    /// Events are buffered and handed to the scheduler in batches: one scheduled block delivers everything
    /// that arrived since the previous one. When the run ends early (disposal, or a failure elsewhere in the
    /// chain), values not yet delivered are dropped and `interrupted` is delivered on `scheduler`.
    ///
    /// The signal records `scheduler` for blocking `first()`, which then refuses to wait on its thread.
    /// With an `ImmediateScheduler` this returns the signal unchanged.
    public func deliver(on scheduler: any Scheduler) -> Signal {
        if scheduler is ImmediateScheduler { return self }
        return Signal(deliverySchedulers: deliverySchedulers + [scheduler]) { observer, lifetime in
            let relay = DeliveryRelay(observer, on: scheduler, lifetime: lifetime)
            lifetime.observeEnded { relay.enqueue(.interrupted) }
            self.run(
                Observer(value: { relay.enqueue(.value($0)) }, termination: { relay.enqueue($0.event()) }),
                lifetime)
        }
    }
}

/// The buffer between a signal and the scheduler `deliver(on:)` delivers on.
final class DeliveryRelay<Value: Sendable, Failure: Error>: Sendable {
    private struct State {
        var buffer: [Event<Value, Failure>] = []
        var isScheduled = false
        var isTerminalAccepted = false
    }

    private let observer: Observer<Value, Failure>
    private let scheduler: any Scheduler
    private let lifetime: Lifetime
    private let state = Locked(State())
    /// Only touched on `scheduler`, whose blocks run one at a time.
    private let isTerminated = SerialBox(false)

    init(_ observer: Observer<Value, Failure>, on scheduler: any Scheduler, lifetime: Lifetime) {
        self.observer = observer
        self.scheduler = scheduler
        self.lifetime = lifetime
    }

    func enqueue(_ event: Event<Value, Failure>) {
        let needsSchedule = state.withLock { state -> Bool in
            guard !state.isTerminalAccepted else { return false }
            if event.isTerminating { state.isTerminalAccepted = true }
            state.buffer.append(event)
            guard !state.isScheduled else { return false }
            state.isScheduled = true
            return true
        }
        if needsSchedule { scheduler.schedule(deliverBatch) }
    }

    @Sendable private func deliverBatch() {
        let batch = state.withLock { state -> [Event<Value, Failure>] in
            defer { state.buffer.removeAll(keepingCapacity: true) }
            return state.buffer
        }
        for event in batch {
            guard !isTerminated.value else { break }
            if case .value = event, lifetime.hasEnded { continue }
            if event.isTerminating { isTerminated.value = true }
            observer.send(event)
        }
        let needsSchedule = state.withLock { state -> Bool in
            state.isScheduled = !state.buffer.isEmpty
            return state.isScheduled
        }
        if needsSchedule { scheduler.schedule(deliverBatch) }
    }
}
