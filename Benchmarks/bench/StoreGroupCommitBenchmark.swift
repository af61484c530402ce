import ContextBusSQLite
import Foundation
@preconcurrency import Glibc

/// `scripts/bench storegroup`: only the store benchmark's one-object durable saves (1 and 8
/// threads) next to raw SQLite at 1 and 8 rows per transaction, for longer, with the CPU time each
/// save costs (less sensitive to a busy machine than the rate) and the saves per group commit.
/// `scripts/bench storegroup8` runs only the 8-thread saves, the workload to profile
/// (`perf record -g .build/release/bench storegroup8`).
enum StoreGroupCommitBenchmark {
    static let duration: Duration = .seconds(4)

    /// Only the 8-thread store saves, for 8 seconds: the workload to profile.
    static func runEightThreads() throws {
        let eight = try BenchDirectory.withTemporary { directory in
            try directory.withStore { store in try measure(store, threads: 8, duration: .seconds(8)) }
        }
        print(
            String(
                format: "8 threads: %.0f saves/s, %.1f µs CPU each, %.2f per txn, %.2f WAL frames per txn (load %@)",
                eight.saves, eight.cpuMicroseconds, eight.savesPerTransaction, eight.framesPerTransaction,
                loadAverage()))
    }

    static func run() throws {
        let (rawOne, rawEight, rawShaped, one, eight) = try BenchDirectory.withTemporary { directory in
            let raw = try RawSQLite(path: directory.path("raw.sqlite"))
            let rawOne = try raw.insertRate(rowsPerTransaction: 1, duration: duration)
            let rawEight = try raw.insertRate(rowsPerTransaction: 8, duration: duration)
            let (one, eight) = try directory.withStore { store in
                (try measure(store, threads: 1), try measure(store, threads: 8))
            }
            let historyJSON = try RawSQLite.lastHistoryJSON(ofStoreAt: directory.path("store.sqlite"))
            let rawShaped = try raw.storeShapedSaveRate(
                savesPerTransaction: 8, historyJSON: historyJSON, duration: duration)
            return (rawOne, rawEight, rawShaped, one, eight)
        }

        func row(_ name: String, _ rate: Double, _ cpu: Double, _ perTxn: Double) -> String {
            name.padding(toLength: 36, withPad: " ", startingAt: 0)
                + String(
                    format: "%9.0f/s  %6.2f× raw 1-row  %7.1f µs CPU each  %5.2f per txn", rate,
                    rate / rawOne.transactions, cpu, perTxn)
        }
        print("one-object durable saves (\(duration) each, load \(loadAverage()))")
        print(row("raw SQLite, 1 row per txn (rows)", rawOne.rows, 1e6 / rawOne.rowsPerCPUSecond, 1))
        print(row("raw SQLite, 8 rows per txn (rows)", rawEight.rows, 1e6 / rawEight.rowsPerCPUSecond, 8))
        print(row("raw SQLite, a save's rows, 8 per txn", rawShaped.saves, 1e6 / rawShaped.savesPerCPUSecond, 8))
        print(
            row("store, 1 thread (saves)", one.saves, one.cpuMicroseconds, one.savesPerTransaction)
                + String(format: "  %5.2f WAL frames per txn", one.framesPerTransaction))
        print(
            row("store, 8 threads (saves)", eight.saves, eight.cpuMicroseconds, eight.savesPerTransaction)
                + String(format: "  %5.2f WAL frames per txn", eight.framesPerTransaction))
    }

    private static func measure(
        _ store: SQLiteStore, threads: Int, duration: Duration = duration
    ) throws -> (saves: Double, cpuMicroseconds: Double, savesPerTransaction: Double, framesPerTransaction: Double) {
        let before = store.statistics
        let rate = try StoreBenchmark.saveRate(store, threads: threads, objectsPerSave: 1, duration: duration)
        let after = store.statistics
        let transactions = Double(max(after.groups - before.groups, 1))
        return (
            rate.saves, 1e6 / rate.objectsPerCPUSecond, Double(after.saves - before.saves) / transactions,
            Double(after.walFrames - before.walFrames) / transactions
        )
    }

    /// The 1-minute load average, beside the rates (the machine is shared).
    static func loadAverage() -> String {
        var loads = [Double](repeating: 0, count: 3)
        guard getloadavg(&loads, 3) == 3 else { return "?" }
        return String(format: "%.2f %.2f %.2f", loads[0], loads[1], loads[2])
    }
}
