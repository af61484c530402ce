extension Signal {
    /// Transforms each value, dropping those transformed to nil.
    @inlinable
    public func compactMap<NewValue: Sendable>(
        _ transform: @escaping @Sendable (Value) -> NewValue?
    ) -> Signal<NewValue, Failure> {
        lifted { observer, _ in
            let send = observer.valueAction
            return Observer(
                value: { value in
                    if let transformed = transform(value) { send(transformed) }
                }, termination: observer.terminationAction)
        }
    }
}
