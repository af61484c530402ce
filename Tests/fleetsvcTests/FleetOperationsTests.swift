import ContextBusClient
import Foundation
import TestSupport
import Testing

@testable import ContextBusSupport

/// fleetsvc run like a service (docs/operations.md): readiness through `$NOTIFY_SOCKET` and its metrics on
/// `bus.metrics`, against a real nats-server, storesvc and fleetsvc.
@Suite(.serialized, .enabled(if: natsServerPath != nil, "nats-server is not installed (scripts/setup installs it)"))
struct FleetOperationsTests {
    @Test func fleetsvcSaysReadyAndItsMetricsAgreeWithFleetStatus() async throws {
        let nats = try await TestNATSServer.start()
        defer { nats.stop() }
        let notifyDirectory = makeTestDirectory(prefix: "fleet-notify")
        defer { try? FileManager.default.removeItem(atPath: notifyDirectory) }
        let listener = try NotifySocketListener(address: notifyDirectory + "/notify.sock")
        defer { listener.close() }
        let gateway = try await TestGateway.start(
            "a", nats: nats, environment: ["NOTIFY_SOCKET": listener.address])
        defer { gateway.stop() }
        expectTrue(
            listener.wait(for: .seconds(20)) { $0.text.hasPrefix("READY=1\nSTATUS=gateway a of fleet default") },
            "no READY=1")

        let saved = try await gateway.save(.object(["insert": .array([deviceInsert("AA:00:00:00:00:01", name: "x")])]))
        let txn = try #require(saved.objectValue?["txn"]?.intValue)
        let deadline = ContinuousClock.now + .seconds(30)
        while try await gateway.status().objectValue?["published"]?.intValue ?? 0 < txn {
            guard ContinuousClock.now < deadline else {
                throw ChildProcessError.timedOut("txn \(txn) published", output: "", errors: "")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        let client = try await BusClient.connect(to: gateway.fleetSocket, clientName: "fleetsvc-tests")
        defer { client.close() }
        let metrics = try await client.call(method: "bus.metrics")
        let text = try #require(metrics.objectValue?["text"]?.stringValue)
        expectTrue(text.contains("ctxbus_fleet_published_txn{service=\"fleetsvc\"} \(txn)\n"), "\(text)")
        expectTrue(text.contains("ctxbus_fleet_nats_connected{service=\"fleetsvc\"} 1\n"), "\(text)")
        expectTrue(text.contains("ctxbus_fleet_publications_total{service=\"fleetsvc\"} "), "\(text)")
        expectTrue(text.contains("ctxbus_build_info{"), "\(text)")
    }
}
