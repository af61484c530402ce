import ContextBusReactive

/// How often, and how patiently, an operation that failed transiently is tried again (`--retry N`).
///
/// The delay doubles from `initialDelay` up to `maxDelay`: with the defaults 100, 200, 400 ms for three
/// retries. Only `DeviceError.isTransient` failures are retried; the step's own timeout still bounds the
/// whole, retries included.
struct RetryPolicy: Sendable, Hashable {
    /// Retries after the first attempt (0: never retry).
    var retries: Int
    var initialDelay: Duration = .milliseconds(100)
    var maxDelay: Duration = .seconds(2)

    static let none = RetryPolicy(retries: 0)

    /// The wait before retry number `retry` (1-based).
    func delay(beforeRetry retry: Int) -> Duration {
        var delay = initialDelay
        for _ in 1..<max(retry, 1) {
            delay *= 2
            if delay >= maxDelay { return maxDelay }
        }
        return min(delay, maxDelay)
    }
}

extension Signal where Failure == DeviceError {
    /// Starts the signal again after a transient failure, following `policy`; other failures, and the last
    /// transient one, are passed on.
    func retrying(
        _ policy: RetryPolicy, on scheduler: any Scheduler, onRetry: (@Sendable (DeviceError, Int) -> Void)? = nil
    ) -> Signal {
        retrying(policy, on: scheduler, after: 0, onRetry: onRetry)
    }

    private func retrying(
        _ policy: RetryPolicy, on scheduler: any Scheduler, after attempts: Int,
        onRetry: (@Sendable (DeviceError, Int) -> Void)?
    ) -> Signal {
        guard attempts < policy.retries else { return self }
        return flatMapError { error in
            guard error.isTransient else { return Signal(error: error) }
            onRetry?(error, attempts + 1)
            return Signal.empty.delay(policy.delay(beforeRetry: attempts + 1), on: scheduler)
                .then(self.retrying(policy, on: scheduler, after: attempts + 1, onRetry: onRetry))
        }
    }

    /// Fails as soon as `other` fails (its values are ignored); otherwise behaves like this signal.
    func failing(whenever other: Signal<Never, Failure>) -> Signal {
        Signal { observer, lifetime in
            lifetime += other.startWithFailed { observer.send(error: $0) }
            lifetime += self.start(observer)
        }
    }
}
