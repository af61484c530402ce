extension Signal {
    /// Transforms each value.
    @inlinable
    public func map<NewValue: Sendable>(
        _ transform: @escaping @Sendable (Value) -> NewValue
    ) -> Signal<NewValue, Failure> {
        lifted { observer, _ in
            let send = observer.valueAction
            return Observer(value: { send(transform($0)) }, termination: observer.terminationAction)
        }
    }
}
