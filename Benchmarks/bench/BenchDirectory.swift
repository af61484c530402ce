import ContextBusObjectGraph
import ContextBusSQLite
import Foundation

/// A scratch directory for one benchmark, under the temporary directory and removed afterwards.
struct BenchDirectory {
    let url: URL

    /// Runs `body` with a new empty directory, then removes it.
    static func withTemporary<T>(_ body: (BenchDirectory) throws -> T) throws -> T {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("ctxbus-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: url) }
        return try body(BenchDirectory(url: url))
    }

    /// The path of `name` in the directory.
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// Runs `body` with a new `SQLiteStore` of the default model in this directory, then closes it.
    func withStore<T>(_ body: (SQLiteStore) throws -> T) throws -> T {
        let store = try SQLiteStore(url: url.appendingPathComponent("store.sqlite"), model: Model.deviceReadings)
        defer { store.close() }
        return try body(store)
    }
}
