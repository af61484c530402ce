import TestSupport
import Testing

@testable import ContextBusServer

struct OperationsOptionsTests {
    static func read(_ arguments: [String]) throws -> (OperationsOptions, ServerAccessOptions, [String]) {
        var operations = OperationsOptions()
        var access = ServerAccessOptions()
        var others: [String] = []
        var flags = FlagReader(arguments)
        while let flag = try flags.next() {
            if try operations.read(flag, from: &flags) { continue }
            if try access.read(flag, from: &flags) { continue }
            others.append(flag)
        }
        return (operations, access, others)
    }

    @Test func readsTheOperationsAndAccessFlagsAndLeavesTheOthers() throws {
        let (operations, access, others) = try Self.read([
            "--log-format", "json", "--metrics-file=/var/lib/node_exporter/storesvc.prom", "--metrics-interval", "30",
            "--allow-uid", "1000", "--allow-uid", "1000", "--allow-gid", "20", "--socket-mode", "0o640",
            "--max-frame", "65536", "--max-in-flight", "8", "--max-outbound", "4096", "--adapter",
        ])
        expectEqual(operations.logFormat, .json)
        expectEqual(operations.metricsFile, "/var/lib/node_exporter/storesvc.prom")
        expectEqual(operations.metricsInterval, 30)
        expectFalse(operations.testHooks)
        expectEqual(access.allowedUIDs, [1000])
        expectEqual(access.allowedGIDs, [20])
        expectEqual(access.socketMode, 0o640)
        expectEqual(access.maxFrame, 65536)
        expectEqual(access.maxInFlight, 8)
        expectEqual(access.maxOutbound, 4096)
        expectEqual(others, ["--adapter"])
    }

    @Test(arguments: [
        (["--log-format", "xml"], "--log-format 'xml': expected text, json"),
        (["--metrics-interval", "0"], "--metrics-interval '0': expected an integer from 1 to 3600"),
        (["--socket-mode", "999"], "--socket-mode '999': expected an octal mode such as 0660"),
        (["--max-outbound", "10"], "--max-outbound '10': expected an integer ≥ 1024"),
    ])
    func badValuesSayWhatWasExpected(arguments: [String], message: String) {
        do {
            _ = try Self.read(arguments)
            Issue.record("\(arguments) was accepted")
        } catch {
            expectEqual("\(error)", message)
        }
    }

    @Test func accessOptionsAllowTheOwnerRootAndTheNamedIDs() {
        var access = ServerAccessOptions()
        access.allowedUIDs = [1000]
        access.allowedGIDs = [20]
        var configuration = BusServer.Configuration(name: "devicesvc", version: "0", socketPath: "/tmp/x.sock")
        access.apply(to: &configuration)
        expectTrue(configuration.access.allowedUserIDs.isSuperset(of: [0, 1000]))
        expectEqual(configuration.access.allowedGroupIDs, [20])
        expectFalse(configuration.access.allowsEveryone)
    }
}
