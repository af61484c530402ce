import ContextBusDBus

/// Tells a characteristic's `ReadValue` echo apart from its notifications.
///
/// BlueZ's D-Bus API signals what a `ReadValue` read exactly as it signals a notification: bluetoothd writes the value
/// into its cache and emits `PropertiesChanged(Value)`, flushed at once, just before it sends the `ReadValue` reply
/// (`src/gatt-client.c`; the simulated BlueZ does the same). So while a read of ours of a characteristic is on its
/// way, the latest `Value` signal of that characteristic is held back from the observers:
/// - the read's successful reply carrying the same bytes comes next: the held signal was the read's echo, and goes to
///   the observers as `.readEcho` (a watch and a chain's notify step ignore it; `device.subscribe`, which reports
///   every `Value` BlueZ broadcasts, does not);
/// - anything else comes first (another signal, the read failing or answering other bytes): the held signal was a
///   notification, and goes to the observers as `.propertiesChanged` before it, in its place in the order.
///
/// A notification arriving while a read is on its way therefore reaches the observers at most one BlueZ message
/// later. Reads by other D-Bus clients cannot be told apart from notifications: their echoes stay notifications.
struct ReadEchoFilter: Sendable {
    /// The reads on their way, by token: the characteristic's object path.
    private(set) var reads: [UInt64: DBusObjectPath] = [:]
    private var nextToken: UInt64 = 1
    /// The `Value` signal held back, with its bytes.
    private var held: (path: DBusObjectPath, bytes: [UInt8], event: BlueZEvent)?
    /// How many echoes were told apart.
    private(set) var echoes = 0

    /// A read of the characteristic at `path` is about to go out.
    ///
    /// - Returns: the token for `readEnded`.
    mutating func readStarting(at path: DBusObjectPath) -> UInt64 {
        defer { nextToken += 1 }
        reads[nextToken] = path
        return nextToken
    }

    /// Another message from BlueZ came: the held signal, if any, was no echo.
    ///
    /// - Returns: the held event, for the observers, before whatever came.
    mutating func release() -> BlueZEvent? {
        defer { held = nil }
        return held?.event
    }

    /// Holds `event` back when it is a `Value` signal (and nothing else) of a characteristic with a read of ours on its
    /// way. Call `release()` first.
    ///
    /// - Returns: whether it was held (the observers do not get it now).
    mutating func hold(_ event: BlueZEvent) -> Bool {
        guard case .propertiesChanged(let change) = event, change.interface == BlueZ.characteristicInterface,
            change.changed.count == 1, let bytes = change.changed["Value"]?.bytesValue,
            reads.values.contains(change.path)
        else { return false }
        held = (change.path, bytes, event)
        return true
    }

    /// The read `token` was answered: with `answer`, its bytes, or `nil` when it failed.
    ///
    /// - Returns: the held event, for the observers before the answer: `.readEcho` when it was this read's echo.
    mutating func readEnded(_ token: UInt64, answer: [UInt8]?) -> BlueZEvent? {
        guard let path = reads.removeValue(forKey: token), let signal = held else { return nil }
        held = nil
        guard signal.path == path, let answer, answer == signal.bytes,
            case .propertiesChanged(let change) = signal.event
        else { return signal.event }
        echoes += 1
        return .readEcho(change)
    }
}
