import Foundation
import TestSupport
import Testing

@testable import ContextBusSupport
@testable import ContextBusWire

/// `ctxbus device run` against the simulated BlueZ and a real `devicesvc` (recording into a real `storesvc`).
@Suite(.serialized, .enabled(if: TestBlueZSimulator.isSupported, "needs dbus-daemon and python3-dbus"))
struct DeviceCommandsIntegrationTests {
    @Test func runPrintsEveryStepRecordsTheReadingsAndExitsFourWhenAStepFails() async throws {
        let simulator = try await TestBlueZSimulator.start()
        defer { simulator.stop() }
        let store = try await TestStoreService.start()
        defer { store.stop() }
        let device = try await TestDeviceService.start(bus: simulator.busAddress, store: store)
        defer { device.stop() }
        let environment = ["CTXBUS_DEVICE_SOCKET": device.socketPath, "CTXBUS_STORE_SOCKET": store.socketPath]

        let run = try await Ctxbus.run(
            [
                "device", "run", "AA:BB:CC:DD:EE:01", "connect", "read:2a19", "notify:2a19x2", "wait:10", "disconnect",
                "--record",
            ],
            environment: environment)
        expectEqual(run.status, 0, "\(run.errors)")
        let lines = run.outputLines
        expectEqual(lines.count, 8, "\(run.output)")
        expectEqual(lines.first?.hasPrefix("[0] connect"), true)
        expectEqual(lines.filter { $0.contains("(notification ") }.count, 2)
        expectEqual(lines.last?.contains("recorded in the store"), true)

        let json = try await Ctxbus.run(
            ["device", "run", "AA:BB:CC:DD:EE:02", "connect", "read:2a19", "disconnect", "--json"],
            environment: environment)
        expectEqual(json.status, 0, "\(json.errors)")
        let result = try RunResult(json: try JSONParser().parse(json.output))
        expectEqual(result.results.map(\.operation), [.connect, .read, .disconnect])
        expectEqual(result.results[1].value?.count, 1)

        let readings = try await Ctxbus.run(
            ["store", "fetch", "Reading", "--count", "--json"], environment: environment)
        try expectEqual(JSONParser().parse(readings.output)["count"], .int(3))

        let failed = try await Ctxbus.run(
            ["device", "run", "AA:BB:CC:DD:EE:01", "connect", "read:2aff", "disconnect", "--json"],
            environment: environment)
        expectEqual(failed.status, 4)
        let error = try JSONParser().parse(failed.output)["error"]
        expectEqual(error?["data"]?["step"], .int(1))
        expectTrue(failed.errors.contains("failed at step 1 (read:2aff)"))
    }
}
