import BusProtocol

/// A bus connection is where a subscription's events go.
extension BusConnection: SubscriberConnection {
    var connectionID: UInt64 { id }

    func send(_ event: RPCEvent) -> Bool {
        send(event: event)
    }

    /// Live events go out from the connection's loop, several in one write when they come faster than it sends.
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
