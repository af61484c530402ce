/// Where a replicated save comes from: another gateway's committed transaction, applied here by the fleet bridge
/// (`store.save`'s `"origin"`, docs/protocol.md "Replication"; docs/fleet.md).
///
/// A save with an origin is applied at most once: the store records the origin's `txn` per gateway in the same
/// transaction as the save's changes, and a save whose `txn` is not above the recorded one changes nothing. Its
/// writes are resolved against the fleet's clocks (`ReplicaResolver`): each changed key is written only when the
/// origin's commit is later than the key's last write here, a delete always wins, and objects are named by their
/// fleet-wide identity (`fleetIDs`).
public struct SaveOrigin: Sendable, Hashable {
    /// The gateway that committed the transaction.
    public var gateway: String
    /// Its transaction number there.
    public var txn: Int64
    /// Its commit's hybrid logical clock (microseconds since 1970, `ReplicaClock`).
    public var clock: Int64
    /// The position of its message in the fleet's stream, recorded with it (the bridge resumes after it).
    public var position: Int64?
    /// Each insert's ID in the request (a temporary one) → the object's fleet-wide ID, `"<gateway>:<Entity>/<n>"`.
    public var fleetIDs: [ObjectID: String]

    public init(gateway: String, txn: Int64, clock: Int64, position: Int64? = nil, fleetIDs: [ObjectID: String] = [:]) {
        self.gateway = gateway
        self.txn = txn
        self.clock = clock
        self.position = position
        self.fleetIDs = fleetIDs
    }
}

/// The clock of one write: the origin commit's hybrid logical clock, then its gateway's name. Later wins.
public struct ReplicaClock: Sendable, Hashable, Comparable {
    public var clock: Int64
    public var gateway: String

    public init(clock: Int64, gateway: String) {
        self.clock = clock
        self.gateway = gateway
    }

    public static func < (lhs: ReplicaClock, rhs: ReplicaClock) -> Bool {
        (lhs.clock, lhs.gateway) < (rhs.clock, rhs.gateway)
    }
}

/// A store's state as a fleet member (`store.replica`): its gateway name, how far its own history is published,
/// and how far each other gateway's transactions are applied.
public struct ReplicaState: Sendable, Hashable {
    /// Per other gateway: the highest of its transactions applied here, and that message's stream position.
    public struct Applied: Sendable, Hashable {
        public var txn: Int64
        public var position: Int64
        public init(txn: Int64, position: Int64) {
            self.txn = txn
            self.position = position
        }
    }

    /// The gateway name the store was registered with; `nil` before registration.
    public var gateway: String?
    /// Every local transaction up to this one is published (the history after it is kept).
    public var published: Int64
    /// The stream position up to which the bridge has read (messages it skipped included).
    public var position: Int64
    public var applied: [String: Applied]
    /// The last committed transaction.
    public var lastTxn: Int64

    public init(
        gateway: String?, published: Int64 = 0, position: Int64 = 0, applied: [String: Applied] = [:],
        lastTxn: Int64 = 0
    ) {
        self.gateway = gateway
        self.published = published
        self.position = position
        self.applied = applied
        self.lastTxn = lastTxn
    }
}

/// A store that can be a member of a fleet (docs/fleet.md): it records where replicated saves come from, the
/// fleet-wide identity of objects and the clocks of their keys, and keeps its history until it is published.
public protocol ReplicatedStore: PersistentStore {
    /// The replica state; with `gateway`, registers the store as that gateway first (the first registration turns
    /// on clocks and the history floor; a store registered under another name refuses with `.invalidRequest`).
    func replicaState(registering gateway: String?) throws -> ReplicaState

    /// Records that every local transaction up to `published` is in the stream (history up to it may now be
    /// pruned), and/or the bridge's stream `position`; a value lower than the recorded one is ignored.
    func recordReplicaProgress(published: Int64?, position: Int64?) throws -> ReplicaState

    /// The fleet-wide IDs of local objects that came from other gateways (others are `<own gateway>:<id>`).
    func fleetIDs(of ids: [ObjectID]) throws -> [ObjectID: String]

    /// The local objects that fleet-wide IDs stand for (deleted ones included), for those this store knows.
    func localIDs(forFleetIDs fleetIDs: [String]) throws -> [String: ObjectID]

    /// `history(since:limit:)` with each transaction's replica clock (microseconds since 1970), up to
    /// `durableTransaction` only: what a power cut can still lose is never handed to the fleet.
    func replicaHistory(since: Int64, limit: Int) throws -> [(changes: ChangeSet, clock: Int64)]

    /// The last transaction a sync made durable (a power cut keeps it and every one before it).
    var durableTransaction: Int64 { get }
}
