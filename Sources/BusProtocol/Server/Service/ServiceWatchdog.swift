import ContextBusSupport
import ContextBusTransport
import Synchronization

/// Pets systemd's watchdog (`WATCHDOG=1`) from the event loops themselves, and only while every one of them turns.
///
/// Each loop runs a timer every `period / 2` that counts a beat; the first loop's timer also runs every `period`
/// and sends `WATCHDOG=1` when every loop has beaten since its last check. A loop stuck in a callback (a handler
/// that blocks where it must not, a deadlock) beats no more, the pings stop, and systemd kills and restarts the
/// service after `WatchdogSec=`. A stopped process (SIGSTOP) sends nothing either; a thread that pinged on its own
/// would not tell a wedged loop from a working one.
///
/// ```
///   loop 0: ─beat─beat─[all loops beat since last check? → WATCHDOG=1]─beat─beat─[check]─ …
///   loop 1: ─beat─beat─beat─beat─ …         (wedged: no beats → no WATCHDOG=1 → systemd restarts the service)
/// ```
///
/// `period` is a third of `WATCHDOG_USEC` (`sd_watchdog_enabled(3)` advises pinging at half the interval; a third
/// leaves room for one late check).
package final class ServiceWatchdog: Sendable {
    private let loops: [EventLoop]
    private let period: Duration
    private let ping: @Sendable () -> Void
    private let beats: [Beat]
    /// Whether `stop()` was called; a ping is sent holding it, so that none follows `stop()`'s return.
    private let isStopped = Locked(false)
    /// The beats the checker saw last time, on the first loop only.
    private let lastSeen: Locked<[Int]>

    private final class Beat: Sendable {
        let count = Atomic<Int>(0)
    }

    /// A watchdog over `loops`; nothing happens until `start()`.
    ///
    /// - Parameters:
    ///   - loops: The event loops that must all be turning (at least one).
    ///   - interval: systemd's watchdog interval (`WATCHDOG_USEC`).
    ///   - ping: Sends `WATCHDOG=1` (called on the first loop).
    package init(loops: [EventLoop], interval: Duration, ping: @escaping @Sendable () -> Void) {
        precondition(!loops.isEmpty, "a watchdog needs an event loop")
        self.loops = loops
        period = max(interval / 3, .milliseconds(10))
        self.ping = ping
        beats = loops.map { _ in Beat() }
        lastSeen = Locked(loops.map { _ in -1 })
    }

    /// Starts the beats and the checks; the first ping goes at once.
    package func start() {
        for (index, loop) in loops.enumerated() {
            loop.execute { [self] in beat(index) }
        }
        loops[0].execute { [self] in check() }
    }

    /// Stops pinging (at `STOPPING=1`: systemd no longer expects pings once the service stops).
    package func stop() {
        isStopped.withLock { $0 = true }
    }

    private func beat(_ index: Int) {
        guard !isStopped.withLock({ $0 }) else { return }
        beats[index].count.add(1, ordering: .relaxed)
        loops[index].schedule(after: period / 2) { [self] in beat(index) }
    }

    private func check() {
        let now = beats.map { $0.count.load(ordering: .relaxed) }
        let allTurned = lastSeen.withLock { seen -> Bool in
            defer { seen = now }
            return zip(seen, now).allSatisfy { $0 != $1 }
        }
        let isRunning = isStopped.withLock { isStopped -> Bool in
            if !isStopped && allTurned { ping() }
            return !isStopped
        }
        if isRunning { loops[0].schedule(after: period) { [self] in check() } }
    }
}
