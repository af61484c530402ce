/// Runs two signals as nested runs and feeds all their events, serialised, to one handler: the engine of
/// `combineLatest` and `zip`. The handler's state needs no lock (it runs inside a `SerialDrain`).
final class PairCoordinator<First: Sendable, Second: Sendable, Failure: Error>: Sendable {
    enum Input: Sendable {
        case first(Event<First, Failure>)
        case second(Event<Second, Failure>)
    }

    private let drain = SerialDrain<Input>()
    private let handler: @Sendable (Input) -> Void

    /// - Parameter handler: called for each input, one at a time; it sends into the downstream observer.
    init(handler: @escaping @Sendable (Input) -> Void) {
        self.handler = handler
    }

    func start(_ first: Signal<First, Failure>, _ second: Signal<Second, Failure>, in lifetime: Lifetime) {
        first.startNested(in: lifetime, Observer { [self] event in submit(.first(event)) })
        second.startNested(in: lifetime, Observer { [self] event in submit(.second(event)) })
    }

    private func submit(_ input: Input) {
        drain.submit(input, handler)
    }
}
