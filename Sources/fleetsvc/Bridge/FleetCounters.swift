import ContextBusSupport

/// What `fleet.status` reports (PROTOCOL.md, "Fleet"): shared by the bridge's threads, read by the status
/// handler.
final class FleetCounters: Sendable {
    struct Values: Sendable {
        /// `connecting` until the stream is read, `following` while it is (PROTOCOL.md's `bootstrapping` is not
        /// built: there are no snapshots).
        var state = "connecting"
        /// Every own transaction up to this one is in the stream (those authored `fleet:*` count as done).
        var published: Int64 = 0
        /// The store's last committed transaction, as its `store.changed` events tell.
        var lastTxn: Int64 = 0
        /// Per other gateway, the highest of its transactions whose save committed here.
        var applied: [String: Int64] = [:]
        /// Messages in the stream after the last one read.
        var streamPending: Int64 = 0
        /// Saves of received transactions sent to the store and not yet known to be committed.
        var applying: Int64 = 0
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
        /// Commands whose chain devicesvc ran (whatever the chain's outcome).
        var commandsRun: Int64 = 0
        /// Commands that ran nothing: not a command, a chain devicesvc refused, devicesvc away.
        var commandsRefused: Int64 = 0
        /// Commands answered from memory: their id was seen before.
        var commandsRepeated: Int64 = 0

        /// `fleet.status`' `pending`: own transactions not yet published (every transaction after `published`,
        /// until the outbound has passed over those authored `fleet:*`) plus received ones not yet applied (those
        /// in the stream not yet read, and those read whose saves have not committed).
        var pending: Int64 { max(0, lastTxn - published) + streamPending + applying }
    }

    private let values = Locked(Values())

    func update(_ body: (inout Values) -> Void) { values.withLock { body(&$0) } }
    var current: Values { values.withLock { $0 } }
}
