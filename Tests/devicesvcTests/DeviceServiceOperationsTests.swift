import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

@testable import ContextBusClient
@testable import ContextBusServer
@testable import ContextBusSupport
@testable import ContextBusWire
@testable import devicesvc

/// A real `devicesvc` on the simulated BlueZ run like a service: readiness, the watchdog and stopping through
/// `$NOTIFY_SOCKET`, `device.stats` and `bus.metrics` (read by prometheus_client's parser) after a known set of
/// chains, JSON logs, and storesvc's access flags.
@Suite(.serialized, .enabled(if: BlueZSimulator.isSupported, "needs dbus-daemon and python3-dbus"))
struct DeviceServiceOperationsTests {
    static let first = BluetoothAddress("AA:BB:CC:DD:EE:01")!
    static let battery = BluetoothUUID("2a19")!
    static let missing = BluetoothUUID("ffff")!

    @Test(.enabled(if: PrometheusText.isAvailable, "needs /usr/bin/python3 with prometheus_client (scripts/setup)"))
    func statsAndMetricsCountChainsByOutcomeAfterReadiness() async throws {
        let simulator = try await BlueZSimulator.start()
        defer { simulator.stopNow() }
        let listener = try NotifySocketListener(address: simulator.directory + "/notify.sock")
        defer { listener.close() }
        let service = try await DeviceServiceProcess.start(
            bus: simulator.busAddress, in: simulator.directory, arguments: ["--log-format", "json"],
            environment: ["NOTIFY_SOCKET": listener.address])
        defer { service.stop() }
        expectTrue(listener.wait(for: .seconds(20)) { $0.text.hasPrefix("READY=1\nSTATUS=serving ") }, "no READY=1")

        let succeeded = await service.run(
            RunParams(
                address: Self.first,
                steps: [.connect(timeoutMs: nil), .read(characteristic: Self.battery, timeoutMs: nil), .disconnect]))
        expectNotNil(try? succeeded.get(), "\(succeeded)")
        let failed = await service.run(
            RunParams(
                address: Self.first,
                steps: [.connect(timeoutMs: nil), .read(characteristic: Self.missing, timeoutMs: nil)]))
        guard case .failure(let error) = failed else {
            Issue.record("a read of a missing characteristic succeeded")
            return
        }
        expectEqual(error.code, .notFound)

        // A chain's answer is sent just before its place in the device's queue is given up.
        var stats = try await service.client.call(DeviceStats.self)
        let settled = ContinuousClock.now + .seconds(10)
        while stats.chains.running > 0, ContinuousClock.now < settled {
            try await Task.sleep(for: .milliseconds(20))
            stats = try await service.client.call(DeviceStats.self)
        }
        expectEqual(stats.chains.started, 2)
        expectEqual(stats.chains.succeeded, 1)
        expectEqual(stats.chains.failed, [404: 1])
        expectEqual(stats.chains.cancelled, 0)
        expectEqual(stats.chains.running, 0)
        expectEqual(stats.chains.queued, 0)
        expectEqual(stats.queues, [:])
        expectEqual(stats.connects, 2)
        expectEqual(stats.connections, 1)
        expectTrue(stats.bluezAvailable)

        let metrics = try PrometheusText.parse(try await service.client.call(BusMetrics.self).text)
        let labels = ["service": "devicesvc"]
        func value(_ name: String, _ extra: [String: String] = [:]) -> Double? {
            metrics.value(name, labels.merging(extra) { $1 })
        }
        expectEqual(value("ctxbus_device_chains_started_total"), 2)
        expectEqual(value("ctxbus_device_chains_total", ["outcome": "succeeded"]), 1)
        expectEqual(value("ctxbus_device_chains_total", ["outcome": "failed"]), 1)
        expectEqual(value("ctxbus_device_chains_total", ["outcome": "cancelled"]), 0)
        expectEqual(value("ctxbus_device_chain_failures_total", ["code": "404"]), 1)
        expectEqual(value("ctxbus_device_connects_total"), 2)
        expectEqual(value("ctxbus_device_bluez_available"), 1)
        expectEqual(value("ctxbus_connections"), 1)
        expectGreaterThan(value("process_open_fds") ?? 0, 3)

        // BlueZ leaving is in device.stats at once, and device.stats still answers.
        try await simulator.stopBluetoothd()
        let deadline = ContinuousClock.now + .seconds(20)
        while try await service.client.call(DeviceStats.self).bluezAvailable, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        let away = try await service.client.call(DeviceStats.self)
        expectFalse(away.bluezAvailable)
        expectTrue(
            listener.wait(for: .seconds(20)) { $0.text.contains("BlueZ is not on the bus") }, "no STATUS= about BlueZ")

        service.process.send(signal: SIGTERM)
        expectTrue(service.process.waitForExit())
        expectTrue(listener.wait(for: .seconds(5)) { $0.text.hasPrefix("STOPPING=1") }, "no STOPPING=1")
        for line in service.log.split(separator: "\n") {
            let object = try JSONParser().parse(Array(line.utf8))
            expectEqual(object["service"], .string("devicesvc"))
            expectNotNil(object["time"]?.stringValue, "\(line)")
            expectNotNil(object["level"]?.stringValue, "\(line)")
            expectNotNil(object["message"]?.stringValue, "\(line)")
        }
    }

    /// Started as systemd starts a `Type=notify` unit with `WatchdogSec=` (`$WATCHDOG_USEC` 300 ms: a ping every
    /// 100 ms): `READY=1`, then `WATCHDOG=1` from the event loops, none while one of them is wedged
    /// (`test.wedgeEventLoop`, of the hidden `--test-hooks`), pings again once it is free, and `STOPPING=1` last at
    /// SIGTERM.
    @Test func tellsTheServiceManagerReadyThenWatchdogThenStoppingAndStopsPingingWhileALoopIsWedged() async throws {
        let simulator = try await BlueZSimulator.start()
        defer { simulator.stopNow() }
        let listener = try NotifySocketListener(address: simulator.directory + "/notify.sock")
        defer { listener.close() }
        let service = try await DeviceServiceProcess.start(
            bus: simulator.busAddress, in: simulator.directory, arguments: ["--test-hooks"],
            environment: ["NOTIFY_SOCKET": listener.address, "WATCHDOG_USEC": "300000"])
        defer { service.stop() }
        expectTrue(listener.wait(for: .seconds(20)) { $0.text == "WATCHDOG=1" }, "no WATCHDOG=1: \(service.log)")

        // The wedge blocks the loop serving this connection for 1.5 s: the pings leave a gap of at least that less a
        // check period (100 ms) and some slack, then resume (the pings' own times, not this test's).
        let sent = ContinuousClock.now
        _ = try await service.client.call(TestWedgeEventLoop.self, WedgeParams(milliseconds: 1500))
        let (gap, resumed) = listener.waitForWatchdogGap(of: .milliseconds(1300), after: sent)
        expectTrue(resumed, "no gap of 1.3 s in the pings while a loop was wedged for 1.5 s (longest: \(gap))")
        expectLessThan(gap, .seconds(10), "pings did not resume")
        _ = try await service.client.call(BusPing.self)

        service.process.send(signal: SIGTERM)
        expectTrue(service.process.waitForExit())
        expectTrue(listener.wait(for: .seconds(5)) { $0.text.hasPrefix("STOPPING=1") }, "no STOPPING=1")
        expectNil(listener.readyWatchdogStoppingOrder(pings: 2))
    }

    @Test(
        .enabled(
            if: geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
                && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"),
            "needs root, /usr/bin/setpriv and /usr/bin/python3 to start a client under another uid"))
    func allowUIDAndSocketModeLetAnotherUserIn() async throws {
        let simulator = try await BlueZSimulator.start()
        defer { simulator.stopNow() }
        let service = try await DeviceServiceProcess.start(
            bus: simulator.busAddress, in: simulator.directory,
            arguments: ["--allow-uid", "65534", "--socket-mode", "0666"])
        defer { service.stop() }
        expectEqual(chmod(simulator.directory, 0o711), 0)
        var status = stat()
        expectEqual(lstat(service.socketPath, &status), 0)
        expectEqual(UInt32(status.st_mode) & 0o7777, 0o666)
        let line = try await DeviceServiceAccessTests.helloAsNobody(service.socketPath)
        let answer = try JSONParser().parse(Array(line.utf8))
        expectEqual(answer["result"]?["server"], .string("devicesvc"), "\(line)")
        expectEqual(answer["result"]?["peer"]?["uid"], .int(65534), "\(line)")
    }
}
