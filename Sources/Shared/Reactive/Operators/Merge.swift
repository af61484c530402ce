extension Signal {
    /// Runs every signal at once and passes on all their values as they come.
    ///
    /// Completes when all have completed; the first failure or interruption ends the merge and interrupts the
    /// others.
    public static func merge(_ signals: some Sequence<Signal>) -> Signal {
        let signals = Array(signals)
        let schedulers = signals.flatMap(\.deliverySchedulers)
        let merged = Signal<Signal, Failure>(values: signals).flatMap(.merge) { $0 }
        return Signal(body: merged.body, deliverySchedulers: schedulers)
    }

    /// Merges this signal with others; see `Signal.merge(_:)`.
    public func merge(with others: Signal...) -> Signal {
        Signal.merge([self] + others)
    }
}
