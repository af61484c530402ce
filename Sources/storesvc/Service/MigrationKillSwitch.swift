import ContextBusServer
import ContextBusSupport
import Glibc

/// `--test-kill-during-migration N`: counts the points a migration passes and, at the N-th, ends the process with
/// SIGKILL, as `kill -9` would at that moment (nothing is flushed, no handler runs).
final class MigrationKillSwitch: Sendable {
    private let point: Int
    private let count = Locked(0)

    init(point: Int) {
        self.point = point
    }

    /// Called at each point (`SQLiteStore.Configuration.migrationProgress`).
    func passed(_ name: String) {
        let reached = count.withLock { count -> Int in
            count += 1
            return count
        }
        guard reached == point else { return }
        ServiceLog.printError("--test-kill-during-migration: killed at point \(reached), \(name)", program: "storesvc")
        kill(getpid(), SIGKILL)
    }
}
