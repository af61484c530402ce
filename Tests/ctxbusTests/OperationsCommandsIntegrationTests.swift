import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

@testable import ContextBusClient
@testable import ContextBusWire
@testable import ctxbus

/// `ctxbus ping`, `ctxbus metrics` and `ctxbus store backup` against a real `storesvc`, stopped or wedged
/// (SIGSTOP) for `ping`'s deadline.
@Suite struct OperationsCommandsIntegrationTests {
    @Test func pingAnswersZeroForALiveServiceAndThreeWithinItsDeadlineForAStoppedOrWedgedOne() async throws {
        let store = try await TestStoreService.start()
        defer { store.stop() }
        let environment = ["CTXBUS_STORE_SOCKET": store.socketPath]
        let live = try await Ctxbus.run(["ping", "store", "--timeout", "5"], environment: environment)
        expectEqual(live.status, 0, "\(live.errors)")
        expectTrue(live.output.hasPrefix("store: ok (storesvc "), "\(live.output)")

        // Wedged: the process is stopped, its socket still accepts into the backlog, nothing answers.
        store.process.send(signal: SIGSTOP)
        let wedged = try await Ctxbus.run(["ping", "store", "--timeout", "1", "--json"], environment: environment)
        store.process.send(signal: SIGCONT)
        expectEqual(wedged.status, 3, "\(wedged.errors)")
        let line = try JSONParser().parse(Array(wedged.output.utf8))
        expectEqual(line["ok"], .bool(false))
        expectEqual(line["service"], .string("store"))
        // Given up at its 1-second deadline (measured by ctxbus itself, from before it connects: the process's own
        // start-up, slow under a sanitizer on a busy machine, is not the ping's).
        let milliseconds = try #require(line["milliseconds"]?.doubleValue)
        expectGreaterThanOrEqual(milliseconds, 1000)
        expectLessThan(milliseconds, 2500)

        // Stopped: nothing listens.
        await store.stopKeepingFiles()
        let stopped = try await Ctxbus.run(["ping", "store", "--timeout", "1"], environment: environment)
        expectEqual(stopped.status, 3)
        expectTrue(stopped.output.hasPrefix("store: not answering at \(store.socketPath)"), "\(stopped.output)")
        expectTrue(stopped.errors.contains("storesvc is not answering"), "\(stopped.errors)")
    }

    @Test func pingWithoutAServiceAsksBothAndFailsWhenOneIsMissing() async throws {
        let store = try await TestStoreService.start()
        defer { store.stop() }
        let outcome = try await Ctxbus.run(
            ["ping"],
            environment: [
                "CTXBUS_STORE_SOCKET": store.socketPath, "CTXBUS_DEVICE_SOCKET": store.directory + "/none.sock",
            ])
        expectEqual(outcome.status, 3)
        expectEqual(outcome.outputLines.count, 2)
        expectTrue(outcome.outputLines.first?.hasPrefix("store: ok") == true, "\(outcome.output)")
        expectTrue(outcome.outputLines.last?.hasPrefix("device: not answering") == true, "\(outcome.output)")
        let usage = try await Ctxbus.run(["ping", "--socket", "/tmp/x.sock"])
        expectEqual(usage.status, 64)
        expectTrue(usage.errors.contains("--socket needs a service"), "\(usage.errors)")
    }

    @Test(.enabled(if: PrometheusText.isAvailable, "needs /usr/bin/python3 with prometheus_client (scripts/setup)"))
    func metricsPrintsTheAnsweringServicesAsOneExposition() async throws {
        let store = try await TestStoreService.start()
        defer { store.stop() }
        let outcome = try await Ctxbus.run(
            ["metrics"],
            environment: [
                "CTXBUS_STORE_SOCKET": store.socketPath, "CTXBUS_DEVICE_SOCKET": store.directory + "/none.sock",
            ])
        expectEqual(outcome.status, 0, "\(outcome.errors)")
        expectTrue(outcome.errors.contains("skipped: devicesvc not answering"), "\(outcome.errors)")
        let metrics = try PrometheusText.parse(outcome.output)
        expectEqual(metrics.value("ctxbus_store_saves_total", ["service": "storesvc"]), 0)
        let none = try await Ctxbus.run(
            ["metrics", "device"], environment: ["CTXBUS_DEVICE_SOCKET": store.directory + "/none.sock"])
        expectEqual(none.status, 3)
    }

    @Test func mergedExpositionsHaveOneBlockPerFamily() throws {
        let store = """
            # HELP ctxbus_connections Clients connected now.
            # TYPE ctxbus_connections gauge
            ctxbus_connections{service="storesvc"} 1
            # HELP ctxbus_store_saves_total Saves.
            # TYPE ctxbus_store_saves_total counter
            ctxbus_store_saves_total{service="storesvc"} 4

            """
        let device = """
            # HELP ctxbus_connections Clients connected now.
            # TYPE ctxbus_connections gauge
            ctxbus_connections{service="devicesvc"} 2

            """
        expectEqual(
            MetricsCommand.merged([store, device]),
            """
            # HELP ctxbus_connections Clients connected now.
            # TYPE ctxbus_connections gauge
            ctxbus_connections{service="storesvc"} 1
            ctxbus_connections{service="devicesvc"} 2
            # HELP ctxbus_store_saves_total Saves.
            # TYPE ctxbus_store_saves_total counter
            ctxbus_store_saves_total{service="storesvc"} 4

            """)
    }

    @Test func storeBackupWritesTheCopyAndSaysWhere() async throws {
        let store = try await TestStoreService.start()
        defer { store.stop() }
        let environment = ["CTXBUS_STORE_SOCKET": store.socketPath]
        _ = try await Ctxbus.run(["store", "save", "--insert", "Device", "address=AA:BB"], environment: environment)
        let path = store.directory + "/copy.sqlite"
        let outcome = try await Ctxbus.run(["store", "backup", path, "--json"], environment: environment)
        expectEqual(outcome.status, 0, "\(outcome.errors)")
        let result = try BackupResult(json: JSONParser().parse(Array(outcome.output.utf8)))
        expectEqual(result.path, path)
        expectEqual(result.txn, 1)
        expectTrue(FileManager.default.fileExists(atPath: path))
        let refused = try await Ctxbus.run(
            ["store", "backup", store.directory + "/no/such/dir/x.sqlite"], environment: environment)
        expectEqual(refused.status, 1)
        expectTrue(refused.errors.contains("does not exist"), "\(refused.errors)")
    }
}
