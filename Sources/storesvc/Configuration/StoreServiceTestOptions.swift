import ContextBusSQLite
import ContextBusServer

/// The hidden flags of storesvc's power-cut and migration tests; no deployment passes them, `--help` does not list
/// them, and the service logs a warning when one is on (`docs/testing.md`, "Power cuts").
///
/// - `--test-power-cut DIR`: the store's files are on a simulated disk (`PowerCutDisk`) that keeps what no sync
///   made durable in `DIR`, so that a test can kill the service and cut the power (`PowerCut`).
/// - `--test-power-cut-freeze PHASE:EVENT:N`: the disk stops every write at that moment (`PowerCutFreezePoint`)
///   and writes `DIR/frozen`.
/// - `--test-checkpoint-pages N`: WAL checkpoints from N pages instead of 1,000 (0: none), so that a short test
///   checkpoints often.
/// - `--test-kill-during-migration N`: the process kills itself with SIGKILL at the N-th point a migration passes
///   when the store opens (`SQLiteStore.Configuration.migrationProgress`: `planned`, each step of the backup, which
///   then copies 8 pages per step, `backed up`, each phase, `recorded`, `committed`), as `kill -9` would; the
///   migration tests stop it at every point in turn.
struct StoreServiceTestOptions: Sendable, Equatable {
    var powerCutDirectory: String?
    var freezePoint: PowerCutFreezePoint?
    var checkpointPages: Int?
    var killDuringMigration: Int?

    /// Reads `flag` if it is one of these, taking its value from `flags`.
    ///
    /// - Returns: `false` when `flag` is not one of these.
    /// - Throws: `ConfigurationError` for a bad value.
    mutating func read(_ flag: String, from flags: inout FlagReader) throws(ConfigurationError) -> Bool {
        switch flag {
        case "--test-power-cut": powerCutDirectory = try flags.nonEmpty(expected: "a directory")
        case "--test-power-cut-freeze":
            let text = try flags.value()
            guard let point = PowerCutFreezePoint(parsing: text) else {
                throw flags.invalid(text, expected: "PHASE:EVENT:N, like after:wal-sync:12")
            }
            freezePoint = point
        case "--test-checkpoint-pages": checkpointPages = try flags.integer(in: 0...1_000_000)
        case "--test-kill-during-migration": killDuringMigration = try flags.integer(in: 1...1_000_000)
        default: return false
        }
        return true
    }
}
