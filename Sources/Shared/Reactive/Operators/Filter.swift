extension Signal {
    /// Passes on only the values for which `isIncluded` returns true.
    @inlinable
    public func filter(_ isIncluded: @escaping @Sendable (Value) -> Bool) -> Signal {
        lifted { observer, _ in
            let send = observer.valueAction
            return Observer(
                value: { value in
                    if isIncluded(value) { send(value) }
                }, termination: observer.terminationAction)
        }
    }
}
