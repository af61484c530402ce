import ContextBusServer
import ContextBusWire

/// A bus connection is where a subscription's events go.
extension BusConnection: SubscriberConnection {
    var connectionID: UInt64 { id }

    var busConnection: BusConnection? { self }

    func send(_ event: RPCEvent) -> Bool {
        send(event: event)
    }

    /// Live events normally go through the hub's `FrameFanOut`; this is for a frame sent to one subscriber.
    func send(encodedEvent frame: [UInt8]) -> Bool {
        sendBatched(encodedEvent: frame, method: ChangedEvent.method)
    }

    func sendWhenWritable(_ event: RPCEvent, completion: @escaping @Sendable (Bool) -> Void) {
        whenWritable { [self] isOpen in
            completion(isOpen && send(event: event))
        }
    }

    func close(because reason: String) {
        close()
    }
}
