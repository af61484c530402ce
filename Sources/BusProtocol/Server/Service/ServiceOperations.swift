import ContextBusSupport
import Foundation

/// What makes a `BusServer` run like a service, the same for every service (storesvc, devicesvc, and the
/// services to come): readiness and the watchdog for systemd (`ServiceNotifier`, `ServiceWatchdog`), the metrics
/// (`bus.metrics`, `--metrics-file`), and the test hooks.
///
/// ```swift
/// let operations = ServiceOperations(name: "storesvc", options: configuration.operations, log: log)
/// operations.serve(server) { storeMetricFamilies() }      // bus.metrics (and test.* with --test-hooks)
/// try server.start()
/// operations.ready(server, status: "serving store.sqlite at txn 1234")   // READY=1, watchdog, metrics file
/// …
/// operations.stopping()                                   // STOPPING=1, no more pings, metrics file removed
/// ```
package final class ServiceOperations: Sendable {
    /// The service's name: the `service` label of its metrics.
    package let name: String
    package let options: OperationsOptions
    package let notifier: ServiceNotifier
    private let log: ServiceLog
    private let state = Locked(State())

    private struct State {
        var server: BusServer?
        var metrics: (@Sendable () -> [MetricFamily])?
        var watchdog: ServiceWatchdog?
        var metricsFile: MetricsFileWriter?
    }

    /// Reads the notification socket and the watchdog from `environment`; nothing is sent before `ready`.
    package init(
        name: String, options: OperationsOptions, log: ServiceLog,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        processID: Int32 = ProcessInfo.processInfo.processIdentifier
    ) {
        self.name = name
        self.options = options
        self.log = log
        notifier = ServiceNotifier(environment: environment, processID: processID) { message in log.warning(message) }
        ProcessMetrics.noteStart()
    }

    /// Answers `bus.metrics` on `server` with the server's, the process's and `metrics()`'s families, and registers
    /// the test hooks when `--test-hooks` is on. Call before or after the server starts.
    package func serve(_ server: BusServer, metrics: @escaping @Sendable () -> [MetricFamily]) {
        state.withLock { state in
            state.server = server
            state.metrics = metrics
        }
        server.serveMetrics { [self] in exposition() }
        if options.testHooks {
            server.registerTestHooks()
            log.warning("--test-hooks: test.wedgeEventLoop is served; for tests only")
        }
    }

    /// The service is listening: `READY=1` with `status`, the watchdog over the server's event loops (when
    /// systemd asked for one), the metrics file (with `--metrics-file`).
    package func ready(_ server: BusServer, status: String) {
        notifier.ready(status: status, mainPID: ProcessInfo.processInfo.processIdentifier)
        var watchdog: ServiceWatchdog?
        if let interval = notifier.watchdogInterval, !server.eventLoops.isEmpty {
            let notifier = notifier
            watchdog = ServiceWatchdog(loops: server.eventLoops, interval: interval) { notifier.watchdog() }
            log.info(
                "watchdog: pinging from the event loops every \(interval / 3)",
                ["watchdogUsec": .int(Self.microseconds(interval))])
        }
        var writer: MetricsFileWriter?
        if let path = options.metricsFile {
            let log = log
            writer = MetricsFileWriter(
                path: path, interval: .seconds(options.metricsInterval), exposition: { [self] in exposition() },
                onError: { message in log.warning(message) })
        }
        state.withLock { state in
            state.watchdog = watchdog
            state.metricsFile = writer
        }
        watchdog?.start()
        writer?.start()
    }

    /// `STATUS=`: what the service is doing now, for `systemctl status`.
    package func status(_ text: String) {
        notifier.status(text)
    }

    /// The service has begun to stop: `STOPPING=1`, no more watchdog pings, the metrics file removed.
    package func stopping(status: String = "stopping") {
        let (watchdog, writer) = state.withLock { state in
            defer {
                state.watchdog = nil
                state.metricsFile = nil
            }
            return (state.watchdog, state.metricsFile)
        }
        // The watchdog first: no WATCHDOG=1 follows STOPPING=1.
        watchdog?.stop()
        notifier.stopping(status: status)
        writer?.stop()
    }

    /// The service's metrics as Prometheus' text format: `ctxbus_build_info`, the server's families, the
    /// service's own, then the process's; every sample labelled `service="<name>"`.
    package func exposition() -> String {
        let (server, metrics) = state.withLock { ($0.server, $0.metrics) }
        var families = [
            MetricFamily(
                name: "ctxbus_build_info", help: "Always 1; the version of the service's software as a label.",
                kind: .gauge,
                samples: [MetricSample(labels: [("version", server?.configuration.version ?? "")], value: 1)])
        ]
        families += server?.metricFamilies ?? []
        families += metrics?() ?? []
        families += ProcessMetrics.families()
        return MetricsExposition.text(families, commonLabels: [MetricLabel(name: "service", value: name)])
    }

    private static func microseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }
}
