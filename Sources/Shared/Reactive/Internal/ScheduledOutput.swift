/// The output side of an operator whose events are all delivered on a serial scheduler (`throttle`,
/// `debounce`): drops everything after the first terminal event, and delivers `interrupted` on the scheduler
/// when the run's lifetime ends first.
final class ScheduledOutput<Value: Sendable, Failure: Error>: Sendable {
    private let observer: Observer<Value, Failure>
    private let scheduler: any Scheduler
    /// Only touched on `scheduler`, whose blocks run one at a time.
    private let isTerminated = SerialBox(false)

    init(_ observer: Observer<Value, Failure>, on scheduler: any Scheduler, lifetime: Lifetime) {
        self.observer = observer
        self.scheduler = scheduler
        lifetime.observeEnded { [self] in schedule(.interrupted) }
    }

    /// Delivers an event now; call on the scheduler.
    func deliver(_ event: Event<Value, Failure>) {
        guard !isTerminated.value else { return }
        if event.isTerminating { isTerminated.value = true }
        observer.send(event)
    }

    /// Delivers an event on the scheduler as soon as possible.
    func schedule(_ event: Event<Value, Failure>) {
        scheduler.schedule { [self] in deliver(event) }
    }
}
