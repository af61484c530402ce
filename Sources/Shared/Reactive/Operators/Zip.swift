extension Signal {
    /// Pairs the values of two signals in order: the first with the first, the second with the second, …
    ///
    /// Completes once either signal has completed and all of its values have been paired. The first failure or
    /// interruption ends it and stops the other signal.
    public static func zip<First: Sendable, Second: Sendable>(
        _ first: Signal<First, Failure>, _ second: Signal<Second, Failure>
    ) -> Signal where Value == (First, Second) {
        Signal(deliverySchedulers: first.deliverySchedulers + second.deliverySchedulers) { observer, lifetime in
            let state = SerialBox(ZipState<First, Second>())
            let coordinator = PairCoordinator<First, Second, Failure> { input in
                guard !state.value.isTerminated else { return }
                func terminate(_ termination: Termination<Failure>) {
                    state.value.isTerminated = true
                    observer.send(termination)
                }
                switch input {
                case .first(.value(let value)):
                    state.value.firsts.append(value)
                case .second(.value(let value)):
                    state.value.seconds.append(value)
                case .first(.completed):
                    state.value.firstCompleted = true
                case .second(.completed):
                    state.value.secondCompleted = true
                case .first(.failed(let error)), .second(.failed(let error)):
                    return terminate(.failed(error))
                case .first(.interrupted), .second(.interrupted):
                    return terminate(.interrupted)
                }
                while !state.value.firsts.isEmpty, !state.value.seconds.isEmpty,
                    let first = state.value.firsts.popFirst(), let second = state.value.seconds.popFirst()
                {
                    observer.valueAction((first, second))
                }
                if state.value.isExhausted { terminate(.completed) }
            }
            coordinator.start(first, second, in: lifetime)
        }
    }

    /// Pairs the values of this signal and `other` in order; see `Signal.zip(_:_:)`.
    public func zip<Other: Sendable>(with other: Signal<Other, Failure>) -> Signal<(Value, Other), Failure> {
        Signal<(Value, Other), Failure>.zip(self, other)
    }

    /// Zips many signals into arrays, in the order of `signals`. An empty list completes at once.
    public static func zip<Element: Sendable>(_ signals: [Signal<Element, Failure>]) -> Signal where Value == [Element] {
        guard let first = signals.first else { return .empty }
        return signals.dropFirst().reduce(first.map { [$0] }) { zipped, next in
            zipped.zip(with: next).map { $0 + [$1] }
        }
    }
}

private struct ZipState<First, Second> {
    var firsts = RingBuffer<First>()
    var seconds = RingBuffer<Second>()
    var firstCompleted = false
    var secondCompleted = false
    var isTerminated = false

    var isExhausted: Bool {
        (firstCompleted && firsts.isEmpty) || (secondCompleted && seconds.isEmpty)
    }
}
