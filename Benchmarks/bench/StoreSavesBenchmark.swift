import Foundation

/// `scripts/bench storesaves`: only the store benchmark's 1,000-object saves, for longer, with the
/// CPU time each save costs (less sensitive to a busy machine than the rate) — the workload to
/// profile (`perf record -g .build/release/bench storesaves`).
enum StoreSavesBenchmark {
    static let duration: Duration = .seconds(6)

    static func run() throws {
        let rate = try BenchDirectory.withTemporary { directory in
            try directory.withStore { store in
                try StoreBenchmark.saveRate(store, threads: 1, objectsPerSave: 1_000, duration: duration)
            }
        }
        print(
            String(
                format: "1,000-object saves: %.0f objects/s, %.0f objects per CPU-second, %.2f ms CPU per save",
                rate.objects, rate.objectsPerCPUSecond, 1_000_000 / rate.objectsPerCPUSecond))
    }
}
