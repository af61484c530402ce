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
        expectTrue(lines[1].hasSuffix("57  87 %"), "\(lines[1])")
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

    @Test func watchDiscoverAndServicesPrintDecodedValues() async throws {
        let simulator = try await TestBlueZSimulator.start()
        defer { simulator.stop() }
        let store = try await TestStoreService.start()
        defer { store.stop() }
        let device = try await TestDeviceService.start(bus: simulator.busAddress, store: store)
        defer { device.stop() }
        let environment = ["CTXBUS_DEVICE_SOCKET": device.socketPath, "CTXBUS_STORE_SOCKET": store.socketPath]

        let services = try await Ctxbus.run(["device", "services", "AA:BB:CC:DD:EE:01"], environment: environment)
        expectEqual(services.status, 0, "\(services.errors)")
        expectEqual(services.outputLines.first, "service 180f")
        expectTrue(services.outputLines.contains("  characteristic 2a19  read,notify"), "\(services.output)")
        expectTrue(services.outputLines.contains("    descriptor 2902"), "\(services.output)")

        let discover = try await Ctxbus.run(
            ["device", "discover", "--seconds", "1.5", "--uuid", "fcd2"], environment: environment)
        expectEqual(discover.status, 0, "\(discover.errors)")
        expectTrue(discover.outputLines.allSatisfy { $0.hasPrefix("AA:BB:CC:DD:EE:05") }, "\(discover.output)")
        expectTrue(discover.output.contains("battery 93 %, temperature 21."), "\(discover.output)")
        expectTrue(discover.errors.contains("ended: "), "\(discover.errors)")

        let watch = try Ctxbus.start(["device", "watch", "AA:BB:CC:DD:EE:01", "2a19"], environment: environment)
        defer { watch.stop() }
        try await watch.waitUntil("connected and a value") { output, _ in
            output.contains("connected") && output.contains(" %\n")
        }
        watch.send(signal: SIGTERM)
        await expectEqual(watch.waitForExit(), 0, "\(watch.standardError)")
        expectTrue(watch.standardOutput.hasPrefix("AA:BB:CC:DD:EE:01  connected\n"), "\(watch.standardOutput)")
    }
}
