import ContextBusClient
import ContextBusSupport
import ContextBusWire
import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

/// `bus.metrics` and `--metrics-file` of a real `storesvc`, read by prometheus_client's parser
/// (`scripts/metrics-parse.py`), against `store.stats` after a known workload; `--log-format json`.
@Suite(.enabled(if: PrometheusText.isAvailable, "needs /usr/bin/python3 with prometheus_client (scripts/setup)"))
struct StoreServiceMetricsTests {
    static func save(_ client: BusClient, address: String) async throws -> Int64 {
        let params = json(#"{"insert":[{"entity":"Device","values":{"address":"\#(address)"}}],"durability":"disk"}"#)
        return try await client.call(method: "store.save", params: params)["txn"]?.intValue ?? -1
    }

    @Test func metricsAgreeWithStoreStatsAfterAKnownWorkload() async throws {
        let directory = try makeTemporaryDirectory()
        let metricsFile = directory.appendingPathComponent("storesvc.prom").path
        let service = try StoreServiceProcess(
            directory: directory,
            arguments: ["--metrics-file", metricsFile, "--metrics-interval", "1", "--log-format", "json"])
        defer { service.destroy() }
        let client = try await service.client()
        defer { client.close() }
        // 10 saves one after the other, 24 from 8 clients at once (group commits of several), 3 that fail
        // (updates of a missing object, each its own group), and one subscription.
        for index in 0..<10 { _ = try await Self.save(client, address: "one-\(index)") }
        let others = try await withThrowingTaskGroup(of: BusClient.self) { group in
            for lane in 0..<8 {
                group.addTask {
                    let other = try await service.client("lane-\(lane)")
                    for index in 0..<3 { _ = try await Self.save(other, address: "lane-\(lane)-\(index)") }
                    return other
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        defer { for other in others { other.close() } }
        for _ in 0..<3 {
            await #expect(throws: RPCError.self) {
                _ = try await client.call(
                    method: "store.save", params: json(#"{"update":[{"id":"Device/999","values":{"name":"x"}}]}"#))
            }
        }
        _ = try await client.call(method: "store.subscribe", params: json(#"{"entity":"Device"}"#))

        let stats = try await client.call(StoreStats.self)
        let metrics = try PrometheusText.parse(try await client.call(BusMetrics.self).text)
        let labels = ["service": "storesvc"]
        expectEqual(stats.saves, 37)
        expectEqual(metrics.value("ctxbus_store_saves_total", labels), Double(stats.saves))
        expectEqual(metrics.value("ctxbus_store_commits_total", labels), Double(stats.commits))
        expectEqual(metrics.value("ctxbus_store_saves_failed_total", labels), 3)
        expectEqual(metrics.value("ctxbus_store_subscriptions", labels), 1)
        expectEqual(metrics.value("ctxbus_store_last_txn", labels), Double(stats.other["lastTxn"]?.intValue ?? -1))
        expectEqual(metrics.value("ctxbus_store_history_newest_txn", labels), stats.historyNewest.map(Double.init))
        expectEqual(metrics.value("ctxbus_store_history_oldest_txn", labels), stats.historyOldest.map(Double.init))
        expectEqual(metrics.value("ctxbus_store_history_transactions", labels), 34)
        expectEqual(
            metrics.value("ctxbus_store_wal_frames_total", labels), Double(stats.other["walFrames"]?.intValue ?? -1))
        // The connections are counted by the server, this one and the eight others.
        expectEqual(metrics.value("ctxbus_connections", labels), Double(stats.connections))
        expectEqual(metrics.value("ctxbus_connections", labels), 9)
        // Group sizes: the same counts as store.stats' groupSizes, as a cumulative histogram.
        let sizes = stats.groupSizes
        expectEqual(metrics.value("ctxbus_store_group_size_count", labels), Double(stats.commits))
        expectEqual(
            metrics.value("ctxbus_store_group_size_sum", labels),
            Double(sizes.reduce(0) { $0 + Int64($1.key) * $1.value }))
        expectEqual(
            metrics.value("ctxbus_store_group_size_bucket", labels.merging(["le": "1"]) { $1 }),
            Double(sizes[1] ?? 0))
        // Every committed group was timed (the three failed ones committed nothing), and each durable one fsynced.
        let commits = try #require(metrics.value("ctxbus_store_commit_seconds_count", labels))
        expectEqual(commits, Double(stats.commits - 3))
        expectGreaterThanOrEqual(metrics.value("ctxbus_store_wal_fsync_seconds_count", labels) ?? 0, commits)
        expectGreaterThan(metrics.value("ctxbus_store_commit_seconds_sum", labels) ?? 0, 0)
        expectEqual(metrics.value("ctxbus_store_commit_seconds_bucket", labels.merging(["le": "+Inf"]) { $1 }), commits)
        expectEqual(metrics.families["ctxbus_store_commit_seconds"], "histogram")
        expectEqual(metrics.families["ctxbus_store_saves"], "counter")
        expectEqual(metrics.families["ctxbus_store_subscriptions"], "gauge")
        expectGreaterThan(metrics.value("process_resident_memory_bytes", labels) ?? 0, 1_000_000)
        expectEqual(metrics.value("ctxbus_build_info", labels.merging(["version": "0.1.0"]) { $1 }), 1)

        // The metrics file says the same, rewritten every second; it is removed when the service stops.
        let deadline = ContinuousClock.now + .seconds(20)
        var fileMetrics: PrometheusText?
        while ContinuousClock.now < deadline {
            if let text = try? String(contentsOfFile: metricsFile, encoding: .utf8), !text.isEmpty {
                let parsed = try PrometheusText.parse(text)
                if parsed.value("ctxbus_store_saves_total", labels) == Double(stats.saves) {
                    fileMetrics = parsed
                    break
                }
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        let file = try #require(fileMetrics, "the metrics file never showed the workload")
        expectEqual(file.value("ctxbus_store_commits_total", labels), Double(stats.commits))
        service.signal(SIGTERM)
        expectEqual(service.waitForExit(), 0)
        expectFalse(FileManager.default.fileExists(atPath: metricsFile), "the metrics file outlived the service")
        Self.expectJSONLogLines(service.log, service: "storesvc")
    }

    /// Every line of `log` is one JSON object with `time` (RFC 3339), `level`, `service` and `message`.
    static func expectJSONLogLines(_ log: String, service: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let lines = log.split(separator: "\n")
        expectGreaterThan(lines.count, 2, "too few log lines: \(log)", sourceLocation: sourceLocation)
        for line in lines {
            guard let object = try? JSONParser().parse(Array(line.utf8)) else {
                Issue.record("not JSON: \(line)", sourceLocation: sourceLocation)
                continue
            }
            expectEqual(object["service"], .string(service), sourceLocation: sourceLocation)
            expectTrue(
                ["error", "warning", "info", "debug"].contains(object["level"]?.stringValue ?? ""), "\(line)",
                sourceLocation: sourceLocation)
            expectNotNil(object["message"]?.stringValue, "\(line)", sourceLocation: sourceLocation)
            expectNotNil(
                object["time"]?.stringValue.flatMap { Date(rfc3339: $0) }, "\(line)", sourceLocation: sourceLocation)
        }
    }

    @Test func metricsFileInAMissingDirectoryIsLoggedAndTheServiceServes() async throws {
        let directory = try makeTemporaryDirectory()
        let service = try StoreServiceProcess(
            directory: directory, arguments: ["--metrics-file", directory.path + "/missing/storesvc.prom"])
        defer { service.destroy() }
        let client = try await service.client()
        defer { client.close() }
        _ = try await client.call(BusPing.self)
        let deadline = ContinuousClock.now + .seconds(20)
        while !service.log.contains("cannot write"), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        expectTrue(
            service.log.contains(
                "warning: cannot write \(directory.path)/missing/storesvc.prom: open \(directory.path)/missing/.storesvc.prom.tmp"
            ), "\(service.log)"
        )
        _ = try await Self.save(client, address: "still-serving")
    }
}
