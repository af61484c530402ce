import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSupport
@testable import ContextBusWire
@testable import ctxbus

/// The built `ctxbus` binary against a real `storesvc` started for each test (one test at a time: each starts
/// processes, and the whole suite shares two cores with the rest of the tests).
@Suite(.serialized) struct StoreCommandsIntegrationTests {
    func withStore(_ body: (TestStoreService, [String: String]) async throws -> Void) async throws {
        let store = try await TestStoreService.start()
        defer { store.stop() }
        try await body(store, ["CTXBUS_STORE_SOCKET": store.socketPath])
    }

    func json(_ line: String) throws -> JSONValue {
        try JSONParser().parse(line)
    }

    @Test func saveThenFetchThenGetShowTheSameObject() async throws {
        try await withStore { _, environment in
            let saved = try await Ctxbus.run(
                [
                    "store", "save", "--insert", "Device:d1", "address=AA:BB:CC:DD:EE:01", "name=thermo", "--insert",
                    "Reading", "characteristic=2a19", "value=Wg==", "time=2024-05-01T12:00:00Z", "device=d1", "--json",
                ], environment: environment)
            expectEqual(saved.status, 0, "\(saved.errors)")
            let result = try SaveResult(json: try json(saved.output), model: nil)
            let device = try #require(result.id(ref: "d1"))
            expectEqual(device, ObjectID(entity: "Device", number: 1))

            let fetched = try await Ctxbus.run(["store", "fetch", "Device"], environment: environment)
            expectEqual(fetched.status, 0, "\(fetched.errors)")
            expectEqual(fetched.outputLines.first?.split(separator: " ", omittingEmptySubsequences: true).first, "id")
            expectTrue(
                fetched.outputLines.contains {
                    $0.hasPrefix("Device/1") && $0.contains("AA:BB:CC:DD:EE:01") && $0.contains("thermo")
                })

            let readings = try await Ctxbus.run(
                ["store", "fetch", "Reading", "--where", "characteristic == $c", "--arg", "c=2a19", "--json"],
                environment: environment)
            let fetch = try StoreObjectList(fetchResult: try json(readings.output))
            guard case .objects(let objects) = fetch.content else {
                Issue.record("expected objects")
                return
            }
            expectEqual(objects.map(\.values["value"]), [.string("Wg==")])
            expectEqual(objects.first?.values["device"], .string("Device/1"))

            let got = try await Ctxbus.run(["store", "get", "Device/1", "Device/9"], environment: environment)
            expectEqual(got.status, 0)
            expectTrue(got.outputLines.contains { $0.hasPrefix("Device/1") && $0.contains("thermo") })
            expectTrue(got.errors.contains("Device/9 does not exist"))
        }
    }

    @Test func batchAndAggregateChangeAndSummariseReadings() async throws {
        try await withStore { _, environment in
            let saved = try await Ctxbus.run(
                [
                    "store", "save", "--insert", "Device:d", "address=AA:01", "--insert", "Reading",
                    "characteristic=2a19",
                    "value=AQ==", "time=2024-05-01T10:10:00Z", "device=d", "--insert", "Reading", "characteristic=2a19",
                    "value=Ag==", "time=2024-05-01T11:10:00Z", "device=d",
                ], environment: environment)
            expectEqual(saved.status, 0, "\(saved.errors)")
            let aggregated = try await Ctxbus.run(
                [
                    "store", "aggregate", "Reading", "--group-by", "device", "--bucket", "time:3600", "--value",
                    "n=count",
                ],
                environment: environment)
            expectEqual(aggregated.status, 0, "\(aggregated.errors)")
            expectEqual(aggregated.outputLines.count, 3, "\(aggregated.output)")
            expectTrue(aggregated.outputLines[1].contains("Device/1") && aggregated.outputLines[1].contains("10:00:00"))
            let batch = try await Ctxbus.run(
                [
                    "store", "batch", "Reading", "--where", "time < $cutoff", "--arg", "cutoff=2024-05-01T11:00:00Z",
                    "--delete", "--json",
                ], environment: environment)
            expectEqual(batch.status, 0, "\(batch.errors)")
            expectEqual(try json(batch.output), .object(["txn": .int(2), "count": .int(1)]))
            let usage = try await Ctxbus.run(
                ["store", "batch", "Reading", "--delete", "--set", "chain=x"], environment: environment)
            expectEqual(usage.status, 64)
        }
    }

    @Test func fetchAndGetWithToManyFaultsLeaveTheReadingsOut() async throws {
        try await withStore { _, environment in
            let saved = try await Ctxbus.run(
                [
                    "store", "save", "--insert", "Device:d1", "address=AA:BB:CC:DD:EE:01", "--insert", "Reading",
                    "characteristic=2a19", "value=Wg==", "time=2024-05-01T12:00:00Z", "device=d1",
                ], environment: environment)
            expectEqual(saved.status, 0, "\(saved.errors)")
            for read in [["store", "get", "Device/1"], ["store", "fetch", "Device"]] {
                let whole = try await Ctxbus.run(read + ["--json"], environment: environment)
                let faulted = try await Ctxbus.run(read + ["--to-many", "faults", "--json"], environment: environment)
                expectTrue(whole.status == 0 && faulted.status == 0, "\(whole.errors) \(faulted.errors)")
                let wholeDevice = try json(whole.output)["objects"]?.arrayValue?.first
                let faultedDevice = try json(faulted.output)["objects"]?.arrayValue?.first
                expectEqual(wholeDevice?["values"]?["readings"], .array([.string("Reading/1")]), "\(read)")
                expectEqual(faultedDevice?["values"]?["address"], .string("AA:BB:CC:DD:EE:01"), "\(read)")
                expectNil(faultedDevice?["values"]?["readings"], "\(read)")
            }
        }
    }

    @Test func jsonOutputOfEveryReadCommandIsOneParsableLine() async throws {
        try await withStore { _, environment in
            _ = try await Ctxbus.run(
                [
                    "store", "save",
                    "{\"insert\":[{\"entity\":\"Device\",\"values\":{\"address\":\"AA:BB:CC:DD:EE:02\"}}]}",
                ],
                environment: environment)
            for command in [
                ["store", "model"], ["store", "stats"], ["store", "history"], ["store", "fetch", "Device", "--count"],
                ["store", "get", "Device/1"],
            ] {
                let outcome = try await Ctxbus.run(command + ["--json"], environment: environment)
                expectEqual(outcome.status, 0, "\(command): \(outcome.errors)")
                expectEqual(outcome.outputLines.count, 1, "\(command)")
                #expect(throws: Never.self) { try JSONParser().parse(outcome.output) }
            }
            let count = try await Ctxbus.run(
                ["store", "fetch", "Device", "--count", "--json"], environment: environment)
            try expectEqual(json(count.output)["count"], .int(1))
        }
    }

    @Test func saveReadsTheProtocolsJSONFromStandardInput() async throws {
        try await withStore { _, environment in
            let outcome = try await Ctxbus.run(
                ["store", "save", "-", "--author", "stdin-test"], environment: environment,
                standardInput:
                    "{\"insert\":[{\"entity\":\"Device\",\"ref\":\"x\",\"values\":{\"address\":\"AA:BB:CC:DD:EE:03\"}}]}"
            )
            expectEqual(outcome.status, 0, "\(outcome.errors)")
            expectTrue(outcome.output.contains("Device/1"))
            let history = try await Ctxbus.run(["store", "history", "--json"], environment: environment)
            try expectEqual(json(history.output)["transactions"]?.arrayValue?.first?["author"], .string("stdin-test"))
        }
    }

    @Test func watchPrintsAChangeSavedByAnotherClientAndExitsZeroOnSIGTERM() async throws {
        try await withStore { store, environment in
            let watch = try Ctxbus.start(["store", "watch", "Device", "--json"], environment: environment)
            defer { watch.stop() }
            // Readiness: the service counts the watch's subscription.
            let client = try await store.client()
            defer { client.close() }
            let deadline = ContinuousClock.now + .seconds(60)
            while try await client.call(StoreStats.self).subscriptions < 1 {
                guard ContinuousClock.now < deadline else {
                    throw ChildProcessError.timedOut(
                        "the subscription", output: watch.standardOutput, errors: watch.standardError)
                }
                try await Task.sleep(for: .milliseconds(20))
            }
            let saved = try await client.call(
                StoreSave.self,
                SaveRequest(
                    inserts: [.init(entity: "Device", ref: "d", values: ["address": .string("AA:BB:CC:DD:EE:04")])],
                    author: "other"))
            try await watch.waitUntil("the change") { output, _ in output.contains("\n") }
            let event = try ChangedEvent(json: try json(watch.standardOutput.split(separator: "\n")[0].description))
            expectEqual(event.txn, saved.txn)
            expectEqual(event.author, "other")
            expectEqual(event.inserted.map(\.values["address"]), [.string("AA:BB:CC:DD:EE:04")])

            watch.send(signal: SIGTERM)
            await expectEqual(watch.waitForExit(), 0, "\(watch.standardError)")
        }
    }

    @Test func watchWithSortAndLimitPrintsTheListThenEachChangeOfIt() async throws {
        try await withStore { store, environment in
            let watch = try Ctxbus.start(
                ["store", "watch", "Device", "--sort", "-address", "--limit", "2", "--json"], environment: environment)
            defer { watch.stop() }
            try await watch.waitUntil("the watch's result") { output, _ in output.contains("\n") }
            let first = try json(watch.standardOutput.split(separator: "\n")[0].description)
            expectEqual(first["objects"], .array([]))
            let client = try await store.client()
            defer { client.close() }
            for address in ["AA:01", "AA:03", "AA:00"] {
                _ = try await client.call(
                    StoreSave.self,
                    SaveRequest(inserts: [.init(entity: "Device", ref: "d", values: ["address": .string(address)])]))
            }
            // AA:00 sorts after both others (descending), past the limit: the list is unchanged, no third event.
            try await watch.waitUntil("two changes") { output, _ in output.split(separator: "\n").count >= 3 }
            let lines = watch.standardOutput.split(separator: "\n").map { try? json(String($0)) }
            expectEqual(lines[1]?["inserted"]?.arrayValue?.first?["index"], .int(0))
            expectEqual(lines[2]?["inserted"]?.arrayValue?.first?["object"]?["values"]?["address"], .string("AA:03"))
            expectEqual(lines[2]?["inserted"]?.arrayValue?.first?["index"], .int(0))
            watch.send(signal: SIGTERM)
            await expectEqual(watch.waitForExit(), 0, "\(watch.standardError)")
            expectEqual(watch.standardOutput.split(separator: "\n").count, 3)
        }
    }

    @Test func watchWithReconnectCarriesOnAcrossAServiceRestartWithNoGapAndNoDuplicate() async throws {
        let store = try await TestStoreService.start()
        defer { store.stop() }
        let environment = ["CTXBUS_STORE_SOCKET": store.socketPath]
        let watch = try Ctxbus.start(["store", "watch", "Device", "--json", "--reconnect"], environment: environment)
        defer { watch.stop() }
        try await waitForSubscriptions(1, at: store, watch: watch)
        try await saveDevice("AA:BB:CC:DD:EE:05", to: store)
        try await watch.waitUntil("the first change") { output, _ in output.split(separator: "\n").count >= 1 }

        await store.stopKeepingFiles()
        let restarted = try await TestStoreService.start(in: store.directory)
        defer { restarted.stop() }
        // Saved whether or not the watch has subscribed again: the resubscription replays what it missed.
        try await saveDevice("AA:BB:CC:DD:EE:06", to: restarted)
        try await watch.waitUntil("the change saved after the restart") { output, _ in
            output.split(separator: "\n").count >= 2
        }
        try await waitForSubscriptions(1, at: restarted, watch: watch)
        try await saveDevice("AA:BB:CC:DD:EE:07", to: restarted)
        try await watch.waitUntil("the live change") { output, _ in output.split(separator: "\n").count >= 3 }

        let events = try watch.standardOutput.split(separator: "\n").map { try ChangedEvent(json: json(String($0))) }
        expectEqual(events.map(\.txn), [1, 2, 3], "no gap, no duplicate")
        expectEqual(
            events.flatMap { $0.inserted.map(\.values["address"]) },
            ["AA:BB:CC:DD:EE:05", "AA:BB:CC:DD:EE:06", "AA:BB:CC:DD:EE:07"].map { .string($0) })
        watch.send(signal: SIGTERM)
        await expectEqual(watch.waitForExit(), 0, "\(watch.standardError)")
    }

    @Test func watchWithoutReconnectExitsThreeWhenTheServiceGoes() async throws {
        let store = try await TestStoreService.start()
        defer { store.stop() }
        let watch = try Ctxbus.start(
            ["store", "watch", "Device"], environment: ["CTXBUS_STORE_SOCKET": store.socketPath])
        defer { watch.stop() }
        try await waitForSubscriptions(1, at: store, watch: watch)
        await store.stopKeepingFiles()
        await expectEqual(watch.waitForExit(), 3, "\(watch.standardError)")
    }

    /// Waits until the service counts `count` subscriptions (the watch's readiness).
    private func waitForSubscriptions(_ count: Int, at store: TestStoreService, watch: ChildProcess) async throws {
        let client = try await store.client()
        defer { client.close() }
        let deadline = ContinuousClock.now + .seconds(60)
        while try await client.call(StoreStats.self).subscriptions < count {
            guard ContinuousClock.now < deadline else {
                throw ChildProcessError.timedOut(
                    "the subscription", output: watch.standardOutput, errors: watch.standardError)
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    private func saveDevice(_ address: String, to store: TestStoreService) async throws {
        let client = try await store.client()
        defer { client.close() }
        _ = try await client.call(
            StoreSave.self,
            SaveRequest(inserts: [.init(entity: "Device", ref: "d", values: ["address": .string(address)])]))
    }

    @Test func aMissingSocketExitsThreeNamingThePathAndTheStartCommand() async throws {
        let directory = makeTestDirectory(prefix: "ctxbus-nosocket")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/store.sock"
        let outcome = try await Ctxbus.run(["store", "stats", "--socket", path])
        expectEqual(outcome.status, 3)
        expectTrue(outcome.errors.contains("no service is listening at \(path)"))
        expectTrue(outcome.errors.contains("storesvc --socket \(path)"))
        expectEmpty(outcome.output)
        let fromRuntimeDirectory = try await Ctxbus.run(
            ["store", "stats"], environment: ["CTXBUS_RUNTIME_DIR": directory])
        expectEqual(fromRuntimeDirectory.status, 3)
        expectTrue(fromRuntimeDirectory.errors.contains("socket tried: \(path) (the default"))
    }

    @Test func aBadPredicateExitsOneShowingWhereItIsWrong() async throws {
        try await withStore { _, environment in
            let outcome = try await Ctxbus.run(
                ["store", "fetch", "Device", "--where", "address == "], environment: environment)
            expectEqual(outcome.status, 1)
            expectTrue(outcome.errors.contains("the service rejected the predicate (error -32602)"))
            expectTrue(outcome.errors.contains("ctxbus:   address == \nctxbus:              ^"))
            let unknownKey = try await Ctxbus.run(
                ["store", "fetch", "Device", "--where", "colour == 'red'", "--json"], environment: environment)
            expectEqual(unknownKey.status, 1)
            try expectEqual(json(unknownKey.output)["error"]?["code"], .int(-32602))
        }
    }

    @Test func aUsageErrorExitsSixtyFourWithoutConnecting() async throws {
        let outcome = try await Ctxbus.run(["store", "fetch", "Reading", "--limit", "-3"])
        expectEqual(outcome.status, 64)
        expectTrue(outcome.errors.contains("invalid value '-3' for '--limit'"))
        expectTrue(outcome.errors.contains("USAGE: ctxbus store fetch"))
    }
}
