extension Signal {
    /// Passes on the first `count` values, then completes (and so stops the upstream).
    ///
    /// With `count` ≤ 0 it completes at once without starting the upstream.
    public func take(first count: Int) -> Signal {
        guard count > 0 else {
            return Signal(body: .empty, deliverySchedulers: deliverySchedulers)
        }
        return lifted { observer, _ in
            let remaining = SerialBox(count)
            return Observer(
                value: { value in
                    guard remaining.value > 0 else { return }
                    remaining.value -= 1
                    observer.valueAction(value)
                    if remaining.value == 0 { observer.sendCompleted() }
                },
                termination: { termination in
                    guard remaining.value > 0 else { return }
                    remaining.value = 0
                    observer.terminationAction(termination)
                })
        }
    }
}
