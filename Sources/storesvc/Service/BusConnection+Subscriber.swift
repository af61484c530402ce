import BusProtocol

/// A bus connection is where a subscription's events go.
extension BusConnection: SubscriberConnection {
    var connectionID: UInt64 { id }

    func send(_ event: RPCEvent) -> Bool {
        send(event: event)
    }

    /// Sent from the hub's thread (`send(encodedEvent:method:)`). `sendBatched(encodedEvent:method:)` (sent by the
    /// connection's loop, coalesced) is not used yet: with it, `aSubscriberThatStopsReadingIsDroppedWhileOthersCarryOn`
    /// failed under heavy machine load (the reading subscriber was dropped too); see the delivery branch's report.
    func send(encodedEvent frame: [UInt8]) -> Bool {
        send(encodedEvent: frame, method: ChangedEvent.method)
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
