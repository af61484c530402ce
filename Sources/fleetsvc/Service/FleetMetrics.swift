import ContextBusServer

/// fleetsvc's metric families: `fleet.status` under Prometheus' names (docs/operations.md, "Metrics").
enum FleetMetrics {
    static func families(_ values: FleetCounters.Values, isConnected: Bool) -> [MetricFamily] {
        let applied = values.applied.sorted { $0.key < $1.key }
        return [
            .gauge(
                "ctxbus_fleet_nats_connected", help: "1 while the NATS connection is up.", value: isConnected ? 1 : 0),
            .gauge(
                "ctxbus_fleet_published_txn", help: "The last local transaction JetStream acknowledged.",
                value: Double(values.published)),
            .gauge(
                "ctxbus_fleet_pending",
                help: "The fleet lag: local transactions not yet published plus other gateways' messages not yet read.",
                value: Double(values.pending)),
            MetricFamily(
                name: "ctxbus_fleet_applied_txn", help: "The last transaction applied here, per other gateway.",
                kind: .gauge,
                samples: applied.map { MetricSample(labels: [("gateway", $0.key)], value: Double($0.value)) }),
            .counter(
                "ctxbus_fleet_publications_total", help: "Transactions JetStream acknowledged (duplicates included).",
                value: values.publications),
            .counter(
                "ctxbus_fleet_refused_total",
                help: "Messages refused: malformed, foreign, subject and origin disagreeing.", value: values.refused),
            .counter(
                "ctxbus_fleet_rejected_total",
                help: "Transactions whose changes the store refused (applied as nothing).",
                value: values.rejected),
            .counter(
                "ctxbus_fleet_unknown_total", help: "Objects or keys left out because this model does not have them.",
                value: values.unknown),
            .counter("ctxbus_fleet_gaps_total", help: "Gaps seen in other gateways' transactions.", value: values.gaps),
            MetricFamily(
                name: "ctxbus_fleet_commands_total", help: "Commands this gateway took (--device), by outcome.",
                kind: .counter,
                samples: [
                    MetricSample(labels: [("outcome", "run")], value: Double(values.commandsRun)),
                    MetricSample(labels: [("outcome", "refused")], value: Double(values.commandsRefused)),
                    MetricSample(labels: [("outcome", "repeated")], value: Double(values.commandsRepeated)),
                ]),
            .counter(
                "ctxbus_fleet_nats_reconnects_total", help: "Reconnections to the NATS server.",
                value: Int64(JetStream.reconnects.load(ordering: .relaxed))),
        ]
    }
}
