import ContextBusSupport
import Dispatch

extension Signal {
    /// Starts the signal and blocks the calling thread until its first value (RAC's `firstOrDefault:`), then
    /// disposes it.
    ///
    /// Refuses to wait, returning `.failure(.wouldDeadlock)`, when the value has not arrived synchronously and
    /// the calling thread is running on a scheduler the signal needs: one recorded by `deliver(on:)`,
    /// `start(on:)`, `Signal.lazy(on:)` or a time-based operator, or one passed in `waitingOn`. Waiting there
    /// would block the very thread that has to deliver the value. A scheduler the signal only reaches inside a
    /// `flatMap` closure cannot be seen in advance: pass it in `waitingOn`. See docs/ReactiveContracts.md.
    ///
    /// - Parameter schedulers: extra schedulers the signal needs, beyond those it recorded.
    /// - Returns: the first value, or why there is none.
    public func first(waitingOn schedulers: (any Scheduler)...) -> Result<Value, SignalWaitError<Failure>> {
        let outcome = Locked<Result<Value, SignalWaitError<Failure>>?>(nil)
        let arrived = DispatchSemaphore(value: 0)
        let disposable = take(first: 1).start { event in
            let result: Result<Value, SignalWaitError<Failure>>
            switch event {
            case .value(let value): result = .success(value)
            case .failed(let error): result = .failure(.failed(error))
            case .completed: result = .failure(.completedWithoutValue)
            case .interrupted: result = .failure(.interrupted)
            }
            let isFirst = outcome.withLock { outcome -> Bool in
                guard outcome == nil else { return false }
                outcome = result
                return true
            }
            if isFirst { arrived.signal() }
        }
        if let result = outcome.withLock({ $0 }) { return result }
        if let blocked = (deliverySchedulers + schedulers).first(where: { $0.isCurrent }) {
            disposable.dispose()
            return .failure(.wouldDeadlock(scheduler: blocked.description))
        }
        arrived.wait()
        disposable.dispose()
        return outcome.withLock { $0 }!
    }

    /// Like `first(waitingOn:)`, but returns `defaultValue` instead of an error when there is no value.
    public func first(or defaultValue: Value, waitingOn schedulers: (any Scheduler)...) -> Value {
        let schedulers = schedulers
        return (try? Signal(body: body, deliverySchedulers: deliverySchedulers + schedulers).first().get())
            ?? defaultValue
    }
}
