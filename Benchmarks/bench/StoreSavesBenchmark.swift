import Foundation
import Shared

/// `scripts/bench storesaves`: only the store benchmark's 1,000-object saves, for longer, with the
/// CPU time each save costs (less sensitive to a busy machine than the rate) — the workload to
/// profile (`perf record -g .build/release/bench storesaves`).
enum StoreSavesBenchmark {
    static let duration: Duration = .seconds(6)

    static func run() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "ctxbus-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteStore(url: directory.appendingPathComponent("store.sqlite"), model: Model.deviceReadings)
        defer { store.close() }
        let rate = try StoreBenchmark.saveRate(store, threads: 1, objectsPerSave: 1_000, duration: duration)
        print(
            String(
                format: "1,000-object saves: %.0f objects/s, %.0f objects per CPU-second, %.2f ms CPU per save",
                rate.objects, rate.objectsPerCPUSecond, 1_000_000 / rate.objectsPerCPUSecond))
    }
}
