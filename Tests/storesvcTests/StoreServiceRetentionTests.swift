import Foundation
import TestSupport
import Testing

@testable import ContextBusServer
@testable import storesvc

/// `storesvc --retain Entity:dateKey:age` (docs/protocol.md, "Batch changes and retention").
struct StoreServiceRetentionTests {
    @Test(arguments: [
        ("Reading:time:30d", RetentionRule(entity: "Reading", dateKey: "time", age: 2_592_000)),
        ("Reading:time:12h", RetentionRule(entity: "Reading", dateKey: "time", age: 43_200)),
        ("Device:lastSeen:90m", RetentionRule(entity: "Device", dateKey: "lastSeen", age: 5_400)),
        ("Reading:time:45s", RetentionRule(entity: "Reading", dateKey: "time", age: 45)),
    ])
    func aRuleReadsEntityKeyAndAge(text: String, rule: RetentionRule) {
        expectEqual(RetentionRule(parsing: text), rule)
    }

    @Test(arguments: [
        "Reading:time", "Reading:time:30", "Reading:time:0d", "Reading:time:-1h", ":time:1d", "Reading::1d",
        "Reading:time:1w", "Reading:time:1d:x",
    ])
    func aRuleThatDoesNotParseIsAUsageError(text: String) throws {
        let output = try runProduct("storesvc", arguments: ["--retain", text, "--socket", "/nonexistent/s.sock"])
        expectEqual(output.status, 64)
        expectTrue(output.standardError.contains("--retain '\(text)'"), "\(output.standardError)")
    }

    @Test(arguments: ["soon", "0s", "-5m", "60", "1w"])
    func aRetainIntervalThatDoesNotParseIsAUsageError(text: String) throws {
        let output = try runProduct(
            "storesvc",
            arguments: ["--retain", "Reading:time:30d", "--retain-interval", text, "--socket", "/nonexistent/s.sock"])
        expectEqual(output.status, 64)
        expectTrue(output.standardError.contains("--retain-interval '\(text)'"), "\(output.standardError)")
        expectTrue(output.standardError.contains("an interval like 60s, 15m or 1h"), "\(output.standardError)")
    }

    @Test(arguments: [
        ("Gadget:time:1d", "the model has no entity 'Gadget'"),
        ("Reading:characteristic:1d", "'characteristic' is not a date attribute of Reading"),
        ("Reading:nothing:1d", "'nothing' is not a date attribute of Reading"),
    ])
    func aRuleTheModelCannotServeStopsTheServiceWith64(rule: String, reason: String) throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = try runProduct(
            "storesvc",
            arguments: [
                "--retain", rule, "--socket", directory.appendingPathComponent("s.sock").path, "--database",
                directory.appendingPathComponent("store.sqlite").path,
            ])
        expectEqual(output.status, 64)
        expectTrue(output.standardError.contains(reason), "\(output.standardError)")
    }

    @Test func oldObjectsAreDeletedAtStartAndEveryIntervalAsABatchAuthoredRetention() throws {
        let first = try StoreServiceProcess.start()
        let connection = try RawBusConnection(path: first.socketPath)
        try connection.hello()
        let old = "2020-01-01T00:00:00.000Z"
        let readings = (0..<5).map { n in
            #"{"entity":"Reading","values":{"characteristic":"2a19","value":"AQ==","time":"\#(n < 3 ? old : "2999-01-01T00:00:00.000Z")","device":"d"}}"#
        }
        let seeded = try connection.call(
            1, "store.save",
            #"{"insert":[{"entity":"Device","ref":"d","values":{"address":"AA:01"}},\#(readings.joined(separator: ","))]}"#
        )
        expectEqual(seeded["result"]?["txn"], .int(1))
        first.signal(SIGTERM)
        expectEqual(first.waitForExit(), 0)
        // Restarted with a rule: the three old readings go at start.
        let service = try StoreServiceProcess(
            directory: first.directory, arguments: ["--retain", "Reading:time:30d", "--retain-interval", "1s"])
        defer { service.destroy() }
        let probe = try RawBusConnection(path: service.socketPath)
        try probe.hello()
        expectTrue(
            eventually {
                (try? probe.call(2, "store.fetch", #"{"entity":"Reading","result":"count"}"#))?["result"]?["count"]
                    == .int(2)
            })
        let history = try probe.call(3, "store.history", #"{"since":1}"#)
        let transaction = try #require(history["result"]?["transactions"]?.arrayValue?.first)
        expectEqual(transaction["author"], .string("retention"))
        expectEqual(transaction["deleted"]?.arrayValue?.count, 3)
        // The next runs find nothing more; the statistics say so.
        expectTrue(
            eventually {
                let stats = try? probe.call(4, "store.stats")
                return (stats?["result"]?["retention"]?.arrayValue?.first?["runs"]?.intValue ?? 0) >= 2
            })
        let stats = try probe.call(5, "store.stats")
        let rule = try #require(stats["result"]?["retention"]?.arrayValue?.first)
        expectEqual(rule["rule"], .string("Reading:time:30d"))
        expectEqual(rule["deleted"], .int(3))
        expectEqual(rule["lastDeleted"], .int(0))
        expectEqual(rule["lastError"], .null)
    }
}
