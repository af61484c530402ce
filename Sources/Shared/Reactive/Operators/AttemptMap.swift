extension Signal {
    /// Transforms each value with a function that can fail; the first error fails the signal.
    ///
    /// Values that arrive after the failure (from an upstream that has not yet been stopped) are dropped without
    /// calling `transform`.
    public func attemptMap<NewValue: Sendable>(
        _ transform: @escaping @Sendable (Value) throws(Failure) -> NewValue
    ) -> Signal<NewValue, Failure> {
        lifted { observer, _ in
            let failed = SerialBox(false)
            return Observer(
                value: { value in
                    guard !failed.value else { return }
                    do throws(Failure) {
                        observer.valueAction(try transform(value))
                    } catch {
                        failed.value = true
                        observer.send(error: error)
                    }
                },
                termination: { termination in
                    guard !failed.value else { return }
                    observer.terminationAction(termination)
                })
        }
    }
}
