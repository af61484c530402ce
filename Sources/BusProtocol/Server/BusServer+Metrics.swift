import ContextBusSupport
import ContextBusWire
import Synchronization

extension BusServer {
    /// Answers `bus.metrics` with `exposition()`, called on the handler queue for each request (docs/protocol.md,
    /// "bus.metrics").
    package func serveMetrics(_ exposition: @escaping @Sendable () -> String) {
        let queue = core.handlerQueue
        core.registerServerMethod(
            BusMetrics.name,
            MethodHandler(ordering: .concurrent, cancellation: .immediate) { request, _, finished in
                queue.async {
                    defer { finished() }
                    guard request.markStarted() else { return }
                    request.connection.answer(request, with: .success(MetricsResult(text: exposition()).json))
                }
            })
    }

    /// The server's own metrics: connections now and since the start, peers refused, connections dropped for
    /// overflowing.
    package var metricFamilies: [MetricFamily] {
        [
            .gauge("ctxbus_connections", help: "Clients connected now.", value: Double(connectionCount)),
            .counter(
                "ctxbus_connections_accepted_total", help: "Client connections accepted since the start.",
                value: Int64(clamping: core.acceptedCount)),
            .counter(
                "ctxbus_connections_refused_total",
                help: "Peers refused with 403: their uid and gid are not allowed (--allow-uid, --allow-gid).",
                value: core.refusedPeers.load(ordering: .relaxed)),
            .counter(
                "ctxbus_connections_overflowed_total",
                help: "Connections dropped with bus.overflow: their outbound queue passed --max-outbound.",
                value: core.overflowDrops.load(ordering: .relaxed)),
        ]
    }
}
