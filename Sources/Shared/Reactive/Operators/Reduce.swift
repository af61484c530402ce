extension Signal {
    /// Combines every value into one result, sent when the signal completes.
    ///
    /// - Parameters:
    ///   - initial: the result before the first value (sent as is if the signal completes without values).
    ///   - combine: combines the result so far with the next value.
    @inlinable
    public func reduce<Result: Sendable>(
        _ initial: Result, _ combine: @escaping @Sendable (Result, Value) -> Result
    ) -> Signal<Result, Failure> {
        reduce(into: initial) { result, value in result = combine(result, value) }
    }

    /// Combines every value into one result, updated in place, sent when the signal completes.
    @inlinable
    public func reduce<Result: Sendable>(
        into initial: Result, _ update: @escaping @Sendable (inout Result, Value) -> Void
    ) -> Signal<Result, Failure> {
        lifted { observer, _ in
            let result = SerialBox(initial)
            return Observer(
                value: { value in update(&result.value, value) },
                termination: { termination in
                    if case .completed = termination {
                        observer.valueAction(result.value)
                    }
                    observer.terminationAction(termination)
                })
        }
    }
}
