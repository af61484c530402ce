/// What the clients of the power-cut rounds were told, kept across rounds and checked after every restart
/// (`StoreServicePowerCutTests`).
struct PowerCutLedger: Sendable {
    /// An acknowledged save that inserted a `Device` whose address is `tag` (alone, or with readings: a batch).
    struct Insert: Sendable {
        var tag: String
        var txn: Int64
        var id: String
        var isDurable: Bool
        var round: Int
    }

    /// A writer's counter device: its name is `k-<n>`, set by durable updates.
    struct Counter: Sendable {
        var id: String
        var round: Int
        /// The last value an acknowledged update set, and that update's txn.
        var acknowledged = 0
        var acknowledgedTxn: Int64 = 0
        /// The last value sent (acknowledged or not).
        var sent = 0
        /// Every acknowledged update: (value, txn).
        var updates: [(value: Int, txn: Int64)] = []
    }

    /// A backup whose answer arrived: the file must be at `path`, whole, with transaction `txn` last.
    struct Backup: Sendable {
        var path: String
        var txn: Int64
    }

    /// Acknowledged inserts by tag.
    var inserts: [String: Insert] = [:]
    /// Acknowledged memory inserts a cut lost, by tag: their IDs must never name another object.
    var lostInserts: [String: Insert] = [:]
    /// Tags of every multi-object (batch) save sent, acknowledged or not.
    var attemptedBatches: Set<String> = []
    /// Tags of the batches acknowledged.
    var acknowledgedBatches: Set<String> = []
    /// Counter devices by address.
    var counters: [String: Counter] = [:]
    /// The backups answered in the last round.
    var backups: [Backup] = []
    /// Chains of devicesvc answered `"recorded": true`, by chain ID (the readings' `chain`): each must be in the
    /// store with one reading per characteristic read, whatever cut came after.
    var recordedChains: [String: Int] = [:]
    /// Recording chains answered `"recorded": false` (the store went away under them): allowed, checked for nothing.
    var unrecordedChains = 0
    /// The highest txn any answer, event or fetch named.
    var highestTxn: Int64 = 0
    /// The `since` the last round's subscriber asked for, and the txns of the events it received, in order.
    var subscriberSince: Int64 = 0
    var subscriberTxns: [Int64] = []
    /// The txns at which the last round's fetches answered, in order.
    var fetchTxns: [Int64] = []
    var subscriberEventCount = 0
    /// Events for transactions a cut then lost (memory saves' events go out before the WAL is synced).
    var eventsOfLostTransactions = 0
    /// Acknowledged memory saves a cut lost (allowed: a suffix), and durable ones (never allowed).
    var memorySavesLost = 0
    var memorySavesAcknowledged = 0
    /// Broken invariants, as sentences.
    var violations: [String] = []

    /// The `since` for the next subscriber: the last txn the previous one saw.
    var nextSubscriberSince: Int64 { subscriberTxns.last ?? subscriberSince }

    mutating func note(_ txn: Int64?) {
        guard let txn else { return }
        highestTxn = max(highestTxn, txn)
    }
}
