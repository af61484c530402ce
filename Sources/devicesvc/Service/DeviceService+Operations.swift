import ContextBusServer
import ContextBusWire

extension DeviceService {
    /// Registers `device.stats` and `bus.metrics` (`DeviceMetrics`).
    func registerOperationsHandlers() {
        server.register(DeviceStats.self) { [self] _, _ in stats() }
        operations.serve(server) { [self] in DeviceMetrics.families(stats()) }
    }

    /// `device.stats`: answered even while BlueZ is away (it says so), unlike the `device.*` methods that need it.
    func stats() -> DeviceStatsResult {
        let counts = counters.counts
        let status = runner.queueStatus
        var queues: [String: DeviceStatsResult.QueueDepth] = [:]
        for key in status.runningKeys.union(status.waitingCounts.keys) {
            queues[key] = DeviceStatsResult.QueueDepth(
                running: status.runningKeys.contains(key) ? 1 : 0, waiting: Int64(status.waitingCounts[key] ?? 0))
        }
        return DeviceStatsResult(
            connections: Int64(server.connectionCount), connects: counts.connects, bluezAvailable: bluez.isAvailable,
            chains: DeviceStatsResult.ChainCounts(
                started: counts.chainsStarted, succeeded: counts.chainsSucceeded, failed: counts.chainsFailed,
                cancelled: counts.chainsCancelled, running: Int64(status.runningCount),
                queued: Int64(status.waitingCount)),
            queues: queues, recordingsSaved: counts.recordingsSaved, recordingsFailed: counts.recordingsFailed,
            watches: Int64(watches.count), reconnects: counts.reconnects, discoveries: Int64(discoveries.all.count))
    }

    /// What `systemctl status` shows (`STATUS=`).
    var statusLine: String {
        bluez.isAvailable
            ? "serving \(configuration.socketPath); adapter \(configuration.chains.adapter)"
            : "serving \(configuration.socketPath); BlueZ is not on the bus: device requests answer 503"
    }
}

/// devicesvc's metric families: `device.stats` under Prometheus' names (docs/operations.md, "Metrics").
enum DeviceMetrics {
    static func families(_ stats: DeviceStatsResult) -> [MetricFamily] {
        let failures = stats.chains.failed.sorted { $0.key < $1.key }
        let outcomes = [
            MetricSample(labels: [("outcome", "succeeded")], value: Double(stats.chains.succeeded)),
            MetricSample(labels: [("outcome", "failed")], value: Double(failures.reduce(0) { $0 + $1.value })),
            MetricSample(labels: [("outcome", "cancelled")], value: Double(stats.chains.cancelled)),
        ]
        let queues = stats.queues.sorted { $0.key < $1.key }
        return [
            .counter(
                "ctxbus_device_chains_started_total", help: "device.run chains accepted.", value: stats.chains.started),
            MetricFamily(
                name: "ctxbus_device_chains_total",
                help: "device.run chains ended, by outcome (cancelled: answered 499).", kind: .counter,
                samples: outcomes),
            MetricFamily(
                name: "ctxbus_device_chain_failures_total",
                help: "device.run chains that failed, by the error code they were answered with (408, 502, 404, 503).",
                kind: .counter,
                samples: failures.map { MetricSample(labels: [("code", String($0.key))], value: Double($0.value)) }),
            .gauge("ctxbus_device_chains_running", help: "Chains running now.", value: Double(stats.chains.running)),
            .gauge(
                "ctxbus_device_chains_queued", help: "Chains waiting for their device's turn now.",
                value: Double(stats.chains.queued)),
            MetricFamily(
                name: "ctxbus_device_queue_depth",
                help: "Chains running and waiting now, per device (devices with none are left out).", kind: .gauge,
                samples: queues.map {
                    MetricSample(labels: [("address", $0.key)], value: Double($0.value.running + $0.value.waiting))
                }),
            .gauge(
                "ctxbus_device_watches", help: "Watches now (device.watch and --watch).", value: Double(stats.watches)),
            .counter(
                "ctxbus_device_reconnects_total", help: "Reconnect attempts of watched devices' links.",
                value: stats.reconnects),
            .gauge(
                "ctxbus_device_discoveries", help: "device.discover requests running now.",
                value: Double(stats.discoveries)),
            .counter(
                "ctxbus_device_connects_total", help: "Links chains set up (connect steps that succeeded).",
                value: stats.connects),
            MetricFamily(
                name: "ctxbus_device_recordings_total",
                help: "Recordings of chains with record: true, by outcome (saved into storesvc or not).",
                kind: .counter,
                samples: [
                    MetricSample(labels: [("outcome", "saved")], value: Double(stats.recordingsSaved)),
                    MetricSample(labels: [("outcome", "failed")], value: Double(stats.recordingsFailed)),
                ]),
            .gauge(
                "ctxbus_device_bluez_available",
                help: "1 while BlueZ is on the system bus; 0 while device requests answer 503.",
                value: stats.bluezAvailable ? 1 : 0),
        ]
    }
}
