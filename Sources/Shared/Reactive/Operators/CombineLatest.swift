extension Signal {
    /// Combines the latest values of two signals: sends a pair each time either sends a value, once both have.
    ///
    /// Completes when both have completed, or as soon as one completes without having sent a value (no pair can
    /// ever follow). The first failure or interruption ends it and stops the other signal.
    public static func combineLatest<First: Sendable, Second: Sendable>(
        _ first: Signal<First, Failure>, _ second: Signal<Second, Failure>
    ) -> Signal where Value == (First, Second) {
        Signal(deliverySchedulers: first.deliverySchedulers + second.deliverySchedulers) { observer, lifetime in
            let state = SerialBox(CombineLatestState<First, Second>())
            let coordinator = PairCoordinator<First, Second, Failure> { input in
                guard !state.value.isTerminated else { return }
                func terminate(_ termination: Termination<Failure>) {
                    state.value.isTerminated = true
                    observer.send(termination)
                }
                switch input {
                case .first(.value(let value)):
                    state.value.first = value
                    if let second = state.value.second { observer.valueAction((value, second)) }
                case .second(.value(let value)):
                    state.value.second = value
                    if let first = state.value.first { observer.valueAction((first, value)) }
                case .first(.completed):
                    state.value.firstCompleted = true
                    if state.value.secondCompleted || state.value.first == nil { terminate(.completed) }
                case .second(.completed):
                    state.value.secondCompleted = true
                    if state.value.firstCompleted || state.value.second == nil { terminate(.completed) }
                case .first(.failed(let error)), .second(.failed(let error)):
                    terminate(.failed(error))
                case .first(.interrupted), .second(.interrupted):
                    terminate(.interrupted)
                }
            }
            coordinator.start(first, second, in: lifetime)
        }
    }

    /// Combines the latest values of this signal and `other`; see `Signal.combineLatest(_:_:)`.
    public func combineLatest<Other: Sendable>(
        with other: Signal<Other, Failure>
    ) -> Signal<(Value, Other), Failure> {
        Signal<(Value, Other), Failure>.combineLatest(self, other)
    }

    /// Combines the latest values of many signals into arrays, in the order of `signals`.
    ///
    /// An empty list completes at once.
    public static func combineLatest<Element: Sendable>(
        _ signals: [Signal<Element, Failure>]
    ) -> Signal where Value == [Element] {
        guard let first = signals.first else { return .empty }
        return signals.dropFirst().reduce(first.map { [$0] }) { combined, next in
            combined.combineLatest(with: next).map { $0 + [$1] }
        }
    }
}

private struct CombineLatestState<First, Second> {
    var first: First?
    var second: Second?
    var firstCompleted = false
    var secondCompleted = false
    var isTerminated = false
}
