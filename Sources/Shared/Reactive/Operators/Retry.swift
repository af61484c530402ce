import ContextBusSupport

extension Signal {
    /// Starts the signal again when it fails, up to `count` more times; the last failure is passed on.
    ///
    /// Values of every attempt are passed on. Each attempt is a fresh start (the producer runs again). Attempts
    /// that fail synchronously are retried in a loop, not by recursion.
    public func retry(upTo count: Int) -> Signal {
        guard count > 0 else { return self }
        return Signal(deliverySchedulers: deliverySchedulers) { observer, lifetime in
            Retrier(signal: self, remaining: count, observer: observer, lifetime: lifetime).attempt()
        }
    }

    /// Starts the signal again when it fails, up to `count` more times, waiting `interval` on `scheduler` before
    /// each new attempt; the last failure is passed on.
    public func retry(upTo count: Int, interval: Duration, on scheduler: any Scheduler) -> Signal {
        guard count > 0 else { return self }
        return flatMapError { error in
            Signal<Never, Failure>.empty.delay(interval, on: scheduler)
                .then(self.retry(upTo: count - 1, interval: interval, on: scheduler))
        }
    }
}

/// Runs the attempts of `retry(upTo:)`, looping instead of recursing when an attempt fails synchronously.
private final class Retrier<Value: Sendable, Failure: Error>: Sendable {
    private struct Attempts {
        var remaining: Int
        var isStarting = false
        var isRestartPending = false
    }

    private let signal: Signal<Value, Failure>
    private let observer: Observer<Value, Failure>
    private let lifetime: Lifetime
    private let attempts: Locked<Attempts>

    init(signal: Signal<Value, Failure>, remaining: Int, observer: Observer<Value, Failure>, lifetime: Lifetime) {
        self.signal = signal
        self.observer = observer
        self.lifetime = lifetime
        attempts = Locked(Attempts(remaining: remaining))
    }

    func attempt() {
        repeat {
            attempts.withLock { $0.isStarting = true }
            signal.startNested(
                in: lifetime,
                Observer(
                    value: observer.valueAction,
                    termination: { [self] termination in
                        guard case .failed = termination, claimRetry() else {
                            return observer.send(termination)
                        }
                    }))
        } while attempts.withLock({ attempts in
            attempts.isStarting = false
            defer { attempts.isRestartPending = false }
            return attempts.isRestartPending
        })
    }

    /// Uses up one retry; returns false if none is left. A retry requested while an attempt is still starting
    /// (a synchronous failure) is left to the loop in `attempt()`; otherwise the new attempt starts here.
    private func claimRetry() -> Bool {
        let startHere = attempts.withLock { attempts -> Bool? in
            guard attempts.remaining > 0 else { return nil }
            attempts.remaining -= 1
            if attempts.isStarting {
                attempts.isRestartPending = true
                return false
            }
            return true
        }
        guard let startHere else { return false }
        if startHere { attempt() }
        return true
    }
}
