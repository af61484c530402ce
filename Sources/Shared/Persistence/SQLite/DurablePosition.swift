import ContextBusSupport
import Synchronization

/// The store's durable position: the last transaction a sync of the writer made durable, so that a power cut keeps
/// it and every transaction before it (`docs/persistence.md`, "The durable position").
///
/// A group with a `.disk` save commits with a sync of the WAL, which makes every frame before it durable too, so on
/// the durable path the position is always the last transaction and nothing more is done. A group of `.memory` saves
/// commits without one: the transactions after the position are answered (and their events sent) but a power cut
/// can still lose them. What must not be told beyond the gateway before it is durable (the fleet's outbound, which
/// `store.replicaChanges` feeds) asks for a sync with `request()`; the writer then syncs once, at most every
/// `interval`, by making its next group sync or, with no save waiting, by a transaction of its own
/// (`SQLiteWriter.syncRequested()`).
final class DurablePosition: Sendable {
    /// The shortest time between two syncs made because one was asked for: a gateway saving only to memory syncs at
    /// most this often for its fleet, and its transactions reach the fleet within about this long.
    static let interval: Duration = .milliseconds(50)

    private let txn = Atomic<Int64>(0)
    private let isRequested = Atomic<Bool>(false)
    /// When the last asked-for sync ran (the writer's queue only reads and writes it; `Locked` for the compiler).
    private let lastRequestedSync = Locked<ContinuousClock.Instant?>(nil)
    private let requestedSyncs = Atomic<Int>(0)

    /// The last transaction a sync made durable (0 until the writer has synced).
    var transaction: Int64 { txn.load(ordering: .acquiring) }

    /// Syncs made only because one was asked for (`store.stats`' `durabilitySyncs`).
    var syncsMadeOnRequest: Int { requestedSyncs.load(ordering: .relaxed) }

    /// A sync of the writer returned with `lastTxn` committed: it and everything before it is durable.
    func synced(upTo lastTxn: Int64) {
        _ = txn.max(lastTxn, ordering: .releasing)
    }

    /// Asks for a sync; `true` when the caller must schedule it (none is scheduled yet).
    func request() -> Bool {
        !isRequested.exchange(true, ordering: .acquiringAndReleasing)
    }

    /// How long a scheduled sync must still wait to keep `interval` from the last one, at `now`.
    func delay(at now: ContinuousClock.Instant) -> Duration {
        guard let last = lastRequestedSync.withLock({ $0 }) else { return .zero }
        return max(.zero, last + Self.interval - now)
    }

    /// The scheduled sync runs now: later requests schedule another.
    func beginRequestedSync(at now: ContinuousClock.Instant) {
        lastRequestedSync.withLock { $0 = now }
        isRequested.store(false, ordering: .releasing)
    }

    /// A sync was made only because one was asked for.
    func countRequestedSync() {
        requestedSyncs.add(1, ordering: .relaxed)
    }
}
