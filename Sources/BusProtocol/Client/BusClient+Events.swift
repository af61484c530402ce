import ContextBusReactive
import ContextBusWire

// Server events (`store.changed`, `device.step`, `device.event`, `bus.overflow`), as signals and async streams.
// They are delivered on the client's loop thread, in the order the service sent them. Event streams survive a
// reconnection (the service's subscriptions do not: resubscribe in `onReconnect`); they complete when the client
// closes or gives up.

extension BusClient {
    /// The service's events, all or those of one `method`, while the signal is started.
    public func events(method: String? = nil) -> Signal<RPCEvent, Never> {
        let all = eventObservers.signal()
        guard let method else { return all }
        return all.filter { $0.method == method }
    }

    /// The service's events of one type, decoded; events whose params do not have the type's shape are
    /// skipped.
    ///
    /// ```swift
    /// client.events(ChangedEvent.self).startWithValues { change in context.merge(change) }
    /// ```
    public func events<Payload: RPCEventPayload>(_ type: Payload.Type) -> Signal<Payload, Never> {
        events(method: Payload.method).compactMap { try? $0.payload(as: Payload.self) }
    }

    /// The service's events, all or those of one `method`, as an async sequence (buffered without limit);
    /// ending the iteration stops observing.
    public func eventStream(method: String? = nil) -> AsyncStream<RPCEvent> {
        AsyncStream { continuation in
            let disposable = events(method: method).start { event in
                switch event {
                case .value(let value): continuation.yield(value)
                case .completed, .interrupted, .failed: continuation.finish()
                }
            }
            continuation.onTermination = { _ in disposable.dispose() }
        }
    }
}
