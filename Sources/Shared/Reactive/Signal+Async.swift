import ContextBusSupport

extension Signal {
    /// A signal that runs `operation` in a new `Task` each time it is started, sends its result and completes.
    ///
    /// Disposing the started signal cancels the task (and the observer receives `interrupted` at once).
    ///
    /// - Parameters:
    ///   - priority: the task's priority.
    ///   - operation: the work; its error fails the signal.
    public init(
        priority: TaskPriority? = nil, operation: @escaping @Sendable () async throws(Failure) -> Value
    ) {
        self.init { observer, lifetime in
            let task = Task(priority: priority) {
                do throws(Failure) {
                    observer.send(value: try await operation())
                    observer.sendCompleted()
                } catch {
                    observer.send(error: error)
                }
            }
            lifetime.observeEnded { task.cancel() }
        }
    }

    /// Starts the signal and waits for its first value, then disposes it.
    ///
    /// Cancelling the waiting task disposes the signal (and this throws `.interrupted`).
    public var value: Value {
        get async throws(SignalWaitError<Failure>) {
            let run = SerialDisposable()
            let result = await withTaskCancellationHandler {
                await withLockedContinuation {
                    (continuation: LockedContinuation<Result<Value, SignalWaitError<Failure>>, Never>) in
                    let resumed = AtomicFlag()
                    run.inner = take(first: 1).start { event in
                        let result: Result<Value, SignalWaitError<Failure>>
                        switch event {
                        case .value(let value): result = .success(value)
                        case .failed(let error): result = .failure(.failed(error))
                        case .completed: result = .failure(.completedWithoutValue)
                        case .interrupted: result = .failure(.interrupted)
                        }
                        if resumed.setOnce() { continuation.resume(returning: result) }
                    }
                }
            } onCancel: {
                run.dispose()
            }
            run.dispose()
            return try result.get()
        }
    }

    /// The signal's values as an async sequence; each iteration starts the signal anew.
    ///
    /// A failure is thrown as the signal's own error, an interruption as `SignalWaitError<Failure>.interrupted`.
    /// Ending the iteration early (or cancelling the iterating task) disposes the signal. Values are buffered
    /// without limit when the consumer is slower than the signal.
    public var values: AsyncThrowingStream<Value, any Error> {
        AsyncThrowingStream { continuation in
            let run = SerialDisposable()
            continuation.onTermination = { _ in run.dispose() }
            run.inner = start { event in
                switch event {
                case .value(let value): continuation.yield(value)
                case .failed(let error): continuation.finish(throwing: error)
                case .completed: continuation.finish()
                case .interrupted: continuation.finish(throwing: SignalWaitError<Failure>.interrupted)
                }
            }
        }
    }
}
