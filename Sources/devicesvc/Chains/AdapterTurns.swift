import ContextBusReactive
import ContextBusWire

extension DeviceBackend {
    /// One connect attempt that waits for one of the adapter's link set-up turns and holds it only until the link is
    /// up: what a chain's connect step and a watch's (re)connect attempts do.
    ///
    /// BlueZ answers `InProgress` (or the controller aborts) when a second LE connection is set up on the same adapter
    /// before the first link is established; service discovery on an established link does not block the adapter, so
    /// the next device's `Connect` goes out while this one still resolves its services. The adapter has
    /// `--concurrent-connects` turns (one by default), keyed by device in `turns`.
    ///
    /// - Parameters:
    ///   - turns: The adapter's link set-up turns.
    ///   - onAttempt: Called when the attempt got its turn and its `Connect` is going out.
    /// - Returns: a signal that completes once the device is connected with its services resolved.
    func connectTakingATurn(
        _ address: BluetoothAddress, onAdapter adapter: String, turns: ChainQueue<String>, resolveTimeout: Duration,
        callTimeout: Duration, onAttempt: @escaping @Sendable () -> Void = {}
    ) -> Signal<Void, DeviceError> {
        let attempt = connect(address, onAdapter: adapter, resolveTimeout: resolveTimeout, callTimeout: callTimeout)
        return Signal { observer, lifetime in
            // The turn ends at `.linkUp` (or when the attempt ends); the attempt itself lives on in `lifetime`.
            let turn = Signal<Never, Never> { turnObserver, _ in
                onAttempt()
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
            lifetime += turns.enqueue(turn, for: address.string).start { _ in }
        }
    }
}
