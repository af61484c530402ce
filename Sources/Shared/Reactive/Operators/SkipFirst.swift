extension Signal {
    /// Drops the first `count` values and passes on the rest.
    public func skip(first count: Int) -> Signal {
        guard count > 0 else { return self }
        return lifted { observer, _ in
            let remaining = SerialBox(count)
            let send = observer.valueAction
            return Observer(
                value: { value in
                    if remaining.value > 0 {
                        remaining.value -= 1
                    } else {
                        send(value)
                    }
                }, termination: observer.terminationAction)
        }
    }
}
