import ContextBusClient
import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

@testable import ContextBusSupport

/// fleetsvc run like a service (docs/operations.md): readiness, the watchdog and stopping through `$NOTIFY_SOCKET`,
/// and its metrics on `bus.metrics` read by a real parser (prometheus_client's) and compared with `fleet.status`,
/// against a real nats-server, storesvcs and fleetsvcs.
@Suite(.serialized, .enabled(if: natsServerPath != nil, "nats-server is not installed (scripts/setup installs it)"))
struct FleetOperationsTests {
    /// Started as systemd starts a `Type=notify` unit with `WatchdogSec=` (`$WATCHDOG_USEC` 300 ms: a ping every
    /// 100 ms), gateway `a` of a fleet of two: `READY=1` once it serves; `WATCHDOG=1` from its event loops, none while
    /// one of them is wedged (`test.wedgeEventLoop`, of the hidden `--test-hooks`); its metrics, parsed, tell what
    /// `fleet.status` tells once both gateways have published and applied everything; `STOPPING=1` last at SIGTERM.
    @Test(.enabled(if: PrometheusText.isAvailable, "needs /usr/bin/python3 with prometheus_client (scripts/setup)"))
    func fleetsvcNotifiesReadyWatchdogAndStoppingAndItsParsedMetricsAgreeWithFleetStatus() async throws {
        let nats = try await TestNATSServer.start()
        defer { nats.stop() }
        let notifyDirectory = makeTestDirectory(prefix: "fleet-notify")
        defer { try? FileManager.default.removeItem(atPath: notifyDirectory) }
        let listener = try NotifySocketListener(address: notifyDirectory + "/notify.sock")
        defer { listener.close() }
        let a = try await TestGateway.start(
            "a", nats: nats, environment: ["NOTIFY_SOCKET": listener.address, "WATCHDOG_USEC": "300000"],
            fleetArguments: ["--test-hooks"])
        defer { a.stop() }
        let b = try await TestGateway.start("b", nats: nats)
        defer { b.stop() }
        expectTrue(
            listener.wait(for: .seconds(20)) { $0.text.hasPrefix("READY=1\nSTATUS=gateway a of fleet default") },
            "no READY=1")
        expectTrue(listener.wait(for: .seconds(20)) { $0.text == "WATCHDOG=1" }, "no WATCHDOG=1")

        // A known workload: two saves on a, three on b (one device and its readings), all applied on the other.
        for i in 1...2 {
            try await a.save(.object(["insert": .array([deviceInsert("AA:00:00:00:00:0\(i)", name: "a\(i)")])]))
        }
        let device = try await b.save(.object(["insert": .array([deviceInsert("BB:00:00:00:00:01", name: "b")])]))
        let deviceID = try #require(device.objectValue?["ids"]?.objectValue?["d"]?.stringValue)
        var bLastTxn: Int64 = 0
        for i in 1...2 {
            let saved = try await b.save(
                .object(["insert": .array([readingInsert("r\(i)", device: .string(deviceID))])]))
            bLastTxn = try #require(saved.objectValue?["txn"]?.intValue)
        }
        try await waitForConvergence([a, b])

        let client = try await BusClient.connect(to: a.fleetSocket, clientName: "fleetsvc-tests")
        defer { client.close() }
        let status = try await a.status()
        let metrics = try PrometheusText.parse(
            try #require(try await client.call(method: "bus.metrics").objectValue?["text"]?.stringValue))
        func value(_ name: String, _ extra: [String: String] = [:]) -> Double? {
            metrics.value(name, ["service": "fleetsvc"].merging(extra) { $1 })
        }
        func number(_ key: String) -> Double? { status.objectValue?[key]?.intValue.map(Double.init) }
        func counter(_ key: String) -> Double? { number(key) }
        // a's own two transactions and b's three applied (which count as done): a's last transaction.
        let lastTxn = try await a.call("store.replica").objectValue?["lastTxn"]?.intValue
        expectEqual(lastTxn, 5)
        expectEqual(number("published"), lastTxn.map(Double.init), "\(status)")
        expectEqual(value("ctxbus_fleet_published_txn"), number("published"))
        expectEqual(status.objectValue?["applied"]?.objectValue?["b"]?.intValue, bLastTxn, "\(status)")
        expectEqual(value("ctxbus_fleet_applied_txn", ["gateway": "b"]), Double(bLastTxn))
        expectEqual(value("ctxbus_fleet_pending"), number("pending"))
        expectEqual(number("pending"), 0)
        expectEqual(value("ctxbus_fleet_refused_total"), number("refused"))
        expectEqual(value("ctxbus_fleet_nats_connected"), status.objectValue?["connected"] == .bool(true) ? 1 : 0)
        expectEqual(value("ctxbus_fleet_nats_connected"), 1)
        expectGreaterThanOrEqual(counter("publications") ?? 0, 2, "\(status)")
        expectEqual(value("ctxbus_fleet_publications_total"), counter("publications"))
        expectEqual(value("ctxbus_fleet_gaps_total"), counter("gaps"))
        expectEqual(value("ctxbus_fleet_rejected_total"), counter("rejected"))
        expectEqual(value("ctxbus_fleet_unknown_total"), counter("unknown"))
        expectNotNil(value("ctxbus_fleet_nats_reconnects_total"))
        expectEqual(metrics.families["ctxbus_fleet_published_txn"], "gauge")
        expectEqual(metrics.families["ctxbus_fleet_publications"], "counter")
        expectEqual(metrics.families["ctxbus_fleet_applied_txn"], "gauge")
        expectNotNil(metrics.families["ctxbus_build_info"])

        // The wedge blocks the loop serving this connection for 1.5 s: the pings leave a gap of at least that less a
        // check period (100 ms) and some slack, then resume (the pings' own times, not this test's).
        let sent = ContinuousClock.now
        _ = try await client.call(method: "test.wedgeEventLoop", params: .object(["milliseconds": .int(1500)]))
        let (gap, resumed) = listener.waitForWatchdogGap(of: .milliseconds(1300), after: sent)
        expectTrue(resumed, "no gap of 1.3 s in the pings while a loop was wedged for 1.5 s (longest: \(gap))")
        expectLessThan(gap, .seconds(10), "pings did not resume")
        _ = try await client.call(method: "bus.ping")

        let fleet = try #require(a.fleet)
        fleet.send(signal: SIGTERM)
        expectEqual(await fleet.waitForExit(), 0)
        expectTrue(listener.wait(for: .seconds(5)) { $0.text.hasPrefix("STOPPING=1") }, "no STOPPING=1")
        expectNil(listener.readyWatchdogStoppingOrder(pings: 2))
        expectEqual(listener.messages.first?.text.split(separator: "\n").last, "MAINPID=\(fleet.pid)")
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
