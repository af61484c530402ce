/// The transaction numbers and object IDs the writer may hand out without a sync: always at most what a durable
/// commit has reserved, so that a power cut that loses memory saves (committed without a sync) never lets a number
/// or an ID those saves were answered with be handed out again.
///
/// A `.memory` group commits without a sync: a power cut can lose it after its saves were answered, their txns and
/// IDs told to clients and subscribers. The numbers a restarted store starts from must therefore be past every
/// number handed out before the cut, including the lost ones, and only a synced commit can promise that. So:
///
/// - `reservedTxn` (`Z_METADATA.reservedTxn`) and, per entity, `reservedIDs` (`Z_PRIMARYKEY.Z_MAX`) are written only
///   in commits that sync (a group with a `.disk` save, or one made to sync for this), and count as reserved only
///   once that commit returned.
/// - A group starts with a sync whenever it could otherwise run past a reservation: fewer than `largestGroup` txns
///   left, or fewer than `idMargin` IDs of an entity (`isRunningLow`). Such a commit raises what runs low to
///   `ahead` past what is handed out (`raises`); txns only when it holds a `.memory` save (a group of `.disk` saves
///   syncs its own txns), so that a store saving only to disk reserves no txn ahead and skips none after a crash. A group without a sync that still ran past one (a save of more than
///   `idMargin` objects of an entity) is rolled back and run again with a sync (`isExceeded`).
/// - A store that opens with `reservedTxn` above its last transaction did not close (`kill -9`, a crash, a power
///   cut): numbers up to it may have been handed out. It writes an empty history row for each of them, so that
///   numbering goes on after them and every txn still has a history row (`SQLiteWriter.init`); its IDs go on after
///   `Z_MAX`. A store that closes writes the exact numbers back (`exact`), so that one that stops cleanly and
///   starts again skips nothing.
///
/// The cost: a stream of only `.memory` saves syncs once per `ahead` transactions or IDs of an entity; a `.disk`
/// group writes the reservations' page once per `ahead` transactions, and no longer writes its entities' counters
/// in every commit (one WAL frame less per commit that inserts). `docs/persistence.md`, "Numbers a power cut cannot
/// hand out twice".
struct NumberReservations: Sendable, Equatable {
    /// How far past what is handed out a raise reserves.
    static let ahead: Int64 = 256
    /// How few IDs of an entity may be left before a group starts with a sync to raise them.
    static let idMargin: Int64 = 256

    /// Per entity, the highest ID number handed out (or reserved by `obtainPermanentIDs`).
    private(set) var counters: [String: Int64]
    /// Per entity, the highest ID number a durable commit reserved (`Z_PRIMARYKEY.Z_MAX`).
    private(set) var reservedIDs: [String: Int64]
    /// The highest txn a durable commit reserved (`Z_METADATA.reservedTxn`).
    private(set) var reservedTxn: Int64

    /// What a durable commit raises.
    struct Raise: Equatable {
        var txn: Int64?
        var ids: [String: Int64] = [:]

        var isEmpty: Bool { txn == nil && ids.isEmpty }
    }

    /// Reservations as the file holds them: every number up to them may have been handed out.
    init(reservedIDs: [String: Int64], reservedTxn: Int64) {
        counters = reservedIDs
        self.reservedIDs = reservedIDs
        self.reservedTxn = reservedTxn
    }

    /// Hands out `count` ID numbers of `entity`; returns the first.
    mutating func allocate(entity: String, count: Int) -> Int64 {
        let first = counters[entity, default: 0] + 1
        counters[entity, default: 0] += Int64(count)
        return first
    }

    /// The highest ID number of `entity` handed out.
    func highestAllocated(entity: String) -> Int64 {
        counters[entity, default: 0]
    }

    /// Whether a group starting after `lastTxn`, of up to `groupLimit` transactions, must sync: without a raise
    /// it could run past a reservation.
    func isRunningLow(lastTxn: Int64, groupLimit: Int) -> Bool {
        lastTxn + Int64(groupLimit) > reservedTxn
            || counters.contains { $0.value + Self.idMargin > reservedIDs[$0.key, default: 0] }
    }

    /// Whether what is handed out, up to transaction `txn`, is past a reservation: a commit without a sync must not
    /// happen then.
    func isExceeded(txn: Int64) -> Bool {
        txn > reservedTxn || counters.contains { $0.value > reservedIDs[$0.key, default: 0] }
    }

    /// What a durable commit ending at transaction `txn` should raise: whatever runs low; txns only when
    /// `raisingTxns` (the commit holds a `.memory` save: only groups without a sync need txns reserved, so that a
    /// store saving only to disk skips no txn when it restarts after a crash).
    func raises(txn: Int64, groupLimit: Int, raisingTxns: Bool = true) -> Raise {
        var raise = Raise()
        if raisingTxns, txn + Int64(groupLimit) > reservedTxn { raise.txn = txn + Int64(groupLimit) + Self.ahead }
        for (entity, counter) in counters where counter + Self.idMargin > reservedIDs[entity, default: 0] {
            raise.ids[entity] = counter + Self.idMargin + Self.ahead
        }
        return raise
    }

    /// The reservations once the durable commit that wrote `raise` has returned.
    mutating func apply(_ raise: Raise) {
        if let txn = raise.txn { reservedTxn = max(reservedTxn, txn) }
        for (entity, reserved) in raise.ids { reservedIDs[entity] = max(reservedIDs[entity, default: 0], reserved) }
    }

    /// What a store that closes writes: exactly what it handed out, so that the next start skips nothing.
    func exact(lastTxn: Int64) -> Raise {
        var raise = Raise(txn: lastTxn)
        for (entity, counter) in counters where counter != reservedIDs[entity, default: 0] {
            raise.ids[entity] = counter
        }
        return raise
    }

    /// The reservations once `exact(lastTxn:)` is written.
    mutating func settle(_ raise: Raise) {
        if let txn = raise.txn { reservedTxn = txn }
        for (entity, reserved) in raise.ids { reservedIDs[entity] = reserved }
    }
}
