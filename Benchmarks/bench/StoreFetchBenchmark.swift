import CContextBusSQLite
import ContextBusObjectGraph
import ContextBusSQLite
import Foundation

/// `scripts/bench storefetch`: the read path alone. A store and a raw SQLite file each hold the same 10,000
/// readings (100 per characteristic); each fetches the 100 of one characteristic by its index, again and again:
/// the store through `fetch(_:)` (objects with their values), SQLite alone stepping the same `SELECT` and reading
/// the columns, and SQLite alone making each row into the values a snapshot holds (what any Swift client of the
/// file pays to have the rows as values, the floor of the store's materialisation).
enum StoreFetchBenchmark {
    static func run() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "ctxbus-bench-fetch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        print(
            "store fetch benchmark (\(ProcessInfo.processInfo.activeProcessorCount) CPUs, \(StoreBenchmark.duration) per row)"
        )
        let raw = try RawSQLite(path: directory.appendingPathComponent("raw.sqlite").path)
        try raw.seedForSelects()
        let store = try SQLiteStore(url: directory.appendingPathComponent("store.sqlite"), model: Model.deviceReadings)
        defer { store.close() }
        try StoreBenchmark.seed(store)
        let rawSelect = try raw.selectRate()
        let rawValues = try raw.selectRate(makingValues: true)
        let fetch = try StoreBenchmark.fetchRate(store)
        var table = BenchTable(columns: ["workload", "store", "raw SQLite", "store / raw"])
        table.add("fetch 100 by indexed predicate/s", fetch, "indexed selects/s", rawSelect)
        table.add("  same", fetch, "selects/s making rows into values", rawValues)
        table.print()
    }
}
