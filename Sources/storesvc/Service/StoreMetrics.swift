import ContextBusSQLite
import ContextBusServer
import ContextBusSupport
import ContextBusWire
import Foundation

/// storesvc's metric families: `store.stats`' counters under Prometheus' names (docs/operations.md, "Metrics"),
/// the writer's commit and WAL fsync latencies, the database's size on disk and the backups.
///
/// Built from the same `StatsResult` that `store.stats` answers, so both tell the same numbers.
enum StoreMetrics {
    /// The bounds of `ctxbus_store_group_size`: saves per group commit, up to the writer's largest group (256).
    static let groupSizeBounds: [Double] = [1, 2, 4, 8, 16, 32, 64, 128, 256]

    static func families(
        stats: StatsResult, store: SQLiteStore, backups: BackupRunner.Counters, databasePath: String
    ) -> [MetricFamily] {
        func other(_ key: String) -> Int64 { stats.other[key]?.intValue ?? 0 }
        var families: [MetricFamily] = [
            .gauge(
                "ctxbus_store_subscriptions", help: "store.subscribe subscriptions now.",
                value: Double(stats.subscriptions)),
            .counter(
                "ctxbus_store_commits_total", help: "SQLite transactions the writer ran; one group commit is one.",
                value: stats.commits),
            .counter(
                "ctxbus_store_saves_total", help: "store.save requests answered, failed ones included.",
                value: stats.saves),
            .counter(
                "ctxbus_store_saves_failed_total", help: "store.save requests answered with an error.",
                value: other("failedSaves")),
            .gauge(
                "ctxbus_store_saves_in_flight", help: "Saves queued for the writer and not yet answered.",
                value: Double(other("inFlightSaves"))),
            MetricFamily(
                name: "ctxbus_store_group_size", help: "Saves per group commit.", kind: .histogram,
                samples: [MetricSample(histogram: groupSizeHistogram(stats.groupSizes))]),
            .gauge(
                "ctxbus_store_largest_group", help: "The largest group commit so far, in saves.",
                value: Double(other("largestGroup"))),
            .counter(
                "ctxbus_store_events_sent_total", help: "store.changed events queued to subscribers.",
                value: other("eventsSent")),
            .counter(
                "ctxbus_store_subscribers_dropped_total",
                help: "Subscriptions ended because their connection went away or overflowed mid-delivery.",
                value: other("subscribersDropped")),
            .gauge("ctxbus_store_last_txn", help: "The last committed transaction.", value: Double(other("lastTxn"))),
            .gauge(
                "ctxbus_store_durable_txn",
                help: "The last transaction a sync made durable (a power cut keeps it and every one before it).",
                value: Double(other("durableTxn"))),
            .counter(
                "ctxbus_store_durability_syncs_total",
                help: "Syncs made only because the durable position was asked to move (the fleet's outbound).",
                value: other("durabilitySyncs")),
            .gauge(
                "ctxbus_store_history_transactions",
                help: "Transactions the history keeps now (newest - oldest + 1; at most --history).",
                value: Double(stats.historyNewest.map { $0 - (stats.historyOldest ?? $0) + 1 } ?? 0)),
        ]
        if let oldest = stats.historyOldest, let newest = stats.historyNewest {
            families.append(
                .gauge(
                    "ctxbus_store_history_oldest_txn",
                    help: "The oldest transaction the history keeps: a since below it gets 410.", value: Double(oldest))
            )
            families.append(
                .gauge(
                    "ctxbus_store_history_newest_txn", help: "The newest transaction in the history.",
                    value: Double(newest)))
        }
        families += [
            .counter(
                "ctxbus_store_wal_frames_total", help: "Pages the writer wrote to the WAL, one frame each.",
                value: other("walFrames")),
            .counter(
                "ctxbus_store_wal_writes_total", help: "Writes the writer made to the WAL file.",
                value: other("walWrites")),
            MetricFamily(
                name: "ctxbus_store_wal_checkpoints_total",
                help: "WAL checkpoints, by who ran them: the checkpointer thread, the writer between groups, or the "
                    + "writer inside a commit (the last resort).",
                kind: .counter,
                samples: [
                    MetricSample(labels: [("by", "checkpointer")], value: Double(other("walCheckpoints"))),
                    MetricSample(labels: [("by", "writer")], value: Double(other("walWriterCheckpoints"))),
                    MetricSample(labels: [("by", "commit")], value: Double(other("walCheckpointsInsideCommits"))),
                ]),
            .counter(
                "ctxbus_store_wal_restarts_total", help: "Commits that restarted the WAL from its beginning.",
                value: other("walRestarts")),
            .gauge(
                "ctxbus_store_wal_largest_pages", help: "The largest WAL, in pages, a commit left.",
                value: Double(other("walLargestPages"))),
            .histogram(
                "ctxbus_store_commit_seconds",
                help: "Group commits, BEGIN to COMMIT's return: applying the saves, writing the WAL, the fsync.",
                store.commitLatency),
            .histogram(
                "ctxbus_store_wal_fsync_seconds", help: "Each fsync of the WAL by the writer (durable groups).",
                store.walSyncLatency),
            MetricFamily(
                name: "ctxbus_store_file_bytes", help: "Sizes of the database's files.", kind: .gauge,
                samples: [
                    MetricSample(labels: [("file", "database")], value: fileSize(databasePath)),
                    MetricSample(labels: [("file", "wal")], value: fileSize(databasePath + "-wal")),
                ]),
            MetricFamily(
                name: "ctxbus_store_backups_total", help: "store.backup requests finished, by outcome.", kind: .counter,
                samples: [
                    MetricSample(labels: [("outcome", "succeeded")], value: Double(backups.succeeded)),
                    MetricSample(labels: [("outcome", "failed")], value: Double(backups.failed)),
                ]),
            .gauge(
                "ctxbus_store_backups_running", help: "Backups running or waiting now.", value: Double(backups.running)),
        ]
        if backups.lastSuccess > 0 {
            families.append(
                .gauge(
                    "ctxbus_store_backup_last_success_timestamp_seconds",
                    help: "When the last successful backup ended, in seconds since the Unix epoch.",
                    value: backups.lastSuccess))
        }
        return families
    }

    /// `store.stats`' `groupSizes` (size → group commits) as a cumulative histogram over `groupSizeBounds`.
    static func groupSizeHistogram(_ sizes: [Int: Int64]) -> LatencyHistogram.Snapshot {
        var cumulative = groupSizeBounds.map { bound in
            sizes.reduce(Int64(0)) { $0 + (Double($1.key) <= bound ? $1.value : 0) }
        }
        cumulative.append(sizes.values.reduce(0, +))
        let sum = sizes.reduce(0.0) { $0 + Double($1.key) * Double($1.value) }
        return LatencyHistogram.Snapshot(bounds: groupSizeBounds, cumulativeCounts: cumulative, sum: sum)
    }

    private static func fileSize(_ path: String) -> Double {
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        return Double((attributes?[.size] as? NSNumber)?.int64Value ?? 0)
    }
}
