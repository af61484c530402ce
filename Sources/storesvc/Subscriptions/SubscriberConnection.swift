import ContextBusServer
import ContextBusWire

/// The connection a subscription's events go to, as the hub needs it.
///
/// The bus connection context implements it; tests use a recording fake. Every method may be
/// called from any thread and must not block.
protocol SubscriberConnection: AnyObject, Sendable {
    /// Identifies the connection (subscriptions belong to one connection).
    var connectionID: UInt64 { get }

    /// The bus connection behind it, whose live events the hub sends through its `FrameFanOut` (from the
    /// connection's loop); `nil` (fakes) sends them with `send(encodedEvent:)`.
    var busConnection: BusConnection? { get }

    /// Queues `event` on the connection's bounded outbound queue.
    ///
    /// - Returns: `false` when the connection is closed or was dropped (its queue overflowed);
    ///   the hub then forgets its subscriptions.
    func send(_ event: RPCEvent) -> Bool

    /// Queues an event already encoded as a frame (`ChangedEventFrame`), like `send(_:)`.
    ///
    /// - Returns: `false` when the connection is closed or was dropped, or the frame is larger than the
    ///   connection allows; the hub then forgets its subscriptions.
    func send(encodedEvent frame: [UInt8]) -> Bool

    /// Queues `event` once the connection has sent what it had queued (paced sending, for
    /// replays): `completion(true)` once it is queued, `completion(false)` when the connection
    /// closed first. `completion` must not be called from inside this method's caller's stack
    /// while a lock is held (any thread is fine).
    func sendWhenWritable(_ event: RPCEvent, completion: @escaping @Sendable (Bool) -> Void)

    /// Closes the connection because a subscription cannot go on without a gap.
    func close(because reason: String)
}
