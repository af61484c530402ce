import ContextBusClient
import Foundation
@preconcurrency import Glibc
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

    /// fleetsvc started while no NATS server answers serves `fleet.status` at once (state `connecting`), says
    /// READY=1, and shares its gateway's data once the server is there.
    @Test func aBridgeStartedBeforeTheNATSServerServesItsStatusAndCatchesUpOnceItIsThere() async throws {
        let nats = TestNATSServer.notStarted()
        defer { nats.stop() }
        let notifyDirectory = makeTestDirectory(prefix: "fleet-notify")
        defer { try? FileManager.default.removeItem(atPath: notifyDirectory) }
        let listener = try NotifySocketListener(address: notifyDirectory + "/notify.sock")
        defer { listener.close() }
        let a = try await TestGateway.start("a", nats: nats, environment: ["NOTIFY_SOCKET": listener.address])
        defer { a.stop() }
        expectTrue(listener.wait(for: .seconds(20)) { $0.text.hasPrefix("READY=1\n") }, "no READY=1")
        let waiting = try await a.status().objectValue ?? [:]
        expectEqual(waiting["state"], .string("connecting"))
        expectEqual(waiting["connected"], .bool(false))
        // One that is stopped (SIGTERM) while it waits for NATS exits cleanly.
        let c = try await TestGateway.start("c", nats: nats)
        defer { c.stop() }
        c.fleet!.send(signal: SIGTERM)
        expectEqual(await c.fleet!.waitForExit(), 0)
        try await a.save(.object(["insert": .array([deviceInsert("AA:00:00:00:00:01", name: "one")])]))
        let b = try await TestGateway.start("b", nats: nats)
        defer { b.stop() }
        try await nats.restart()
        let contents = try await waitForConvergence([a, b])
        expectTrue(contents.contains("Device AA:00:00:00:00:01 name=\"one\""), "\(contents)")
    }
}
