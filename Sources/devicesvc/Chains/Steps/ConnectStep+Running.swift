import ContextBusReactive
import ContextBusWire

/// `Device1.Connect`, then `ServicesResolved`; each attempt waits for one of the adapter's link set-up turns.
extension ConnectStep: RunnableStep {
    func run(in context: StepContext) -> Signal<ChainProgress, DeviceError> {
        attemptTakingTheAdaptersTurn(in: context).retrying(in: context).map {
            finished(in: context, mtu: context.mtu)
        }
    }

    /// One connect attempt that waits for the adapter's turn and holds it only until the link is up.
    ///
    /// BlueZ answers `InProgress` (or the controller aborts) when a second LE connection is set up on the same
    /// adapter before the first link is established; service discovery on an established link does not block
    /// the adapter, so the next device's `Connect` goes out while this one still resolves its services. Each
    /// retry takes a new turn (other devices may connect during the backoff). The adapter has
    /// `settings.concurrentConnects` turns (one by default).
    private func attemptTakingTheAdaptersTurn(in context: StepContext) -> Signal<Void, DeviceError> {
        let attempt = context.backend.connect(
            context.address, onAdapter: context.adapter,
            resolveTimeout: min(context.settings.resolveTimeout, context.timeout), callTimeout: context.timeout)
        let record = context.record
        return Signal { [connections = context.connections, address = context.address] observer, lifetime in
            // The turn ends at `.linkUp` (or when the attempt ends); the attempt itself lives on in `lifetime`.
            let turn = Signal<Never, Never> { turnObserver, _ in
                record.connectAttempted()
                lifetime += attempt.start { event in
                    switch event {
                    case .value(.linkUp):
                        turnObserver.sendCompleted()
                    case .completed:
                        turnObserver.sendCompleted()
                        observer.send(value: ())
                        observer.sendCompleted()
                    case .failed(let error):
                        turnObserver.sendCompleted()
                        observer.send(error: error)
                    case .interrupted:
                        turnObserver.sendCompleted()
                        observer.sendInterrupted()
                    }
                }
            }
            lifetime += connections.enqueue(turn, for: address.string).start { _ in }
        }
    }
}
