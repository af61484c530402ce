import ContextBusSupport

/// What `fleet.status` reports (PROTOCOL.md, "Fleet"): shared by the bridge's threads, read by the status
/// handler.
final class FleetCounters: Sendable {
    struct Values: Sendable {
        var state = "starting"
        var published: Int64 = 0
        var lastTxn: Int64 = 0
        var applied: [String: Int64] = [:]
        /// Messages of other gateways in the stream not yet read.
        var streamPending: Int64 = 0
        /// Messages refused: malformed, foreign, subject and origin disagreeing.
        var refused: Int64 = 0
        /// Objects or keys left out because this gateway's model does not have them.
        var unknown: Int64 = 0
        /// Transactions whose changes the store refused (a unique key taken, a value that does not fit):
        /// applied as nothing.
        var rejected: Int64 = 0
        /// Transactions published (acks from JetStream), duplicates included.
        var publications: Int64 = 0
        /// Gaps seen in another gateway's transactions.
        var gaps: Int64 = 0
        var commandsRun: Int64 = 0
        var commandsRefused: Int64 = 0
    }

    private let values = Locked(Values())

    func update(_ body: (inout Values) -> Void) { values.withLock { body(&$0) } }
    var current: Values { values.withLock { $0 } }
}
