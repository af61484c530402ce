import Foundation
import TestSupport
import Testing

@testable import fleetsvc

/// fleetsvc's command line (docs/protocol.md, "Running fleetsvc"): what it reads, what it refuses (exit status 64
/// and the reason), `--help`.
struct FleetCommandLineTests {
    @Test func defaultsComeFromTheEnvironmentAndTheRuntimeDirectory() throws {
        let outcome = try FleetServiceConfiguration.parse(
            arguments: ["--gateway", "a"],
            environment: ["CTXBUS_RUNTIME_DIR": "/run/ctxbus", "CTXBUS_NATS_URL": "nats://nats.example:4222"])
        guard case .run(let configuration) = outcome else {
            Issue.record("\(outcome)")
            return
        }
        expectEqual(configuration.storeSocketPath, "/run/ctxbus/store.sock")
        expectEqual(configuration.socketPath, "/run/ctxbus/fleet.sock")
        expectEqual(configuration.natsURL, "nats://nats.example:4222")
        expectEqual(configuration.fleet, "default")
        expectEqual(configuration.replicas, 1)
        expectNil(configuration.deviceSocketPath)
        expectEqual(configuration.streamName, "CTXBUS_DEFAULT")
        expectEqual(configuration.commandStreamName, "CTXBUS_DEFAULT_COMMANDS")
    }

    @Test func everyFlagIsRead() throws {
        let outcome = try FleetServiceConfiguration.parse(
            arguments: [
                "--gateway", "gw-1", "--store", "/s.sock", "--device=/d.sock", "--socket", "/f.sock", "--nats",
                "tls://n:4222", "--fleet", "north", "--creds", "/c.creds", "--tls-ca", "/ca.pem", "--replicas", "3",
                "--log-level", "debug",
            ], environment: [:])
        guard case .run(let configuration) = outcome else {
            Issue.record("\(outcome)")
            return
        }
        expectEqual(configuration.gateway, "gw-1")
        expectEqual(configuration.storeSocketPath, "/s.sock")
        expectEqual(configuration.deviceSocketPath, "/d.sock")
        expectEqual(configuration.socketPath, "/f.sock")
        expectEqual(configuration.natsURL, "tls://n:4222")
        expectEqual(configuration.fleet, "north")
        expectEqual(configuration.credentialsFile, "/c.creds")
        expectEqual(configuration.certificateAuthorityFile, "/ca.pem")
        expectEqual(configuration.replicas, 3)
        expectEqual("\(configuration.logLevel)", "debug")
        expectEqual(configuration.transactionSubject(of: "gw-1"), "ctxbus.north.gw-1.txn")
        expectEqual(configuration.commandSubject(of: "b"), "ctxbus.north.b.commands")
    }

    @Test(arguments: [
        ([String](), "--gateway needs a value"),
        (["--gateway", "a.b"], "--gateway 'a.b': expected 1 to 64 letters, digits, '-' or '_'"),
        (["--gateway", "a", "--fleet", "x y"], "--fleet 'x y': expected 1 to 64 letters, digits, '-' or '_'"),
        (["--gateway", "a", "--replicas", "9"], "--replicas '9'"),
        (["--gateway", "a", "--nats"], "--nats needs a value"),
        (["--gateway", "a", "--bogus"], "unknown option '--bogus'"),
        (["--gateway", "a", "stray"], "stray"),
    ])
    func aBadCommandLineIsRefusedNamingTheFlag(arguments: [String], message: String) {
        do {
            let outcome = try FleetServiceConfiguration.parse(arguments: arguments, environment: [:])
            Issue.record("\(arguments) was accepted: \(outcome)")
        } catch {
            expectTrue("\(error)".contains(message), "\(error)")
        }
    }

    @Test func aPasswordInTheNATSURLIsNotShown() throws {
        var configuration = FleetServiceConfiguration(storeSocketPath: "/s", socketPath: "/f")
        configuration.natsURL = "nats://a:s3cret@one:4222,nats://two:4222,tls://b:p@w@three:4222"
        expectEqual(
            configuration.natsURLWithoutPassword, "nats://a:***@one:4222,nats://two:4222,tls://b:***@three:4222")
    }

    /// The process: 64 and the reason for a bad command line, 0 and the usage for `--help`.
    @Test func theProcessExitsSixtyFourForABadCommandLineAndPrintsItsUsageForHelp() async throws {
        let bad = try ChildProcess(
            executable: productsDirectory + "/fleetsvc", arguments: ["--gateway", "a", "--replicas", "0"])
        defer { bad.stop() }
        expectEqual(await bad.waitForExit(), 64)
        expectTrue(bad.standardError.contains("--replicas '0'"), "\(bad.standardError)")
        let help = try ChildProcess(executable: productsDirectory + "/fleetsvc", arguments: ["--help"])
        defer { help.stop() }
        expectEqual(await help.waitForExit(), 0)
        expectTrue(help.standardOutput.hasPrefix("usage: fleetsvc --gateway NAME"), "\(help.standardOutput)")
        expectTrue(help.standardOutput.contains("--device SOCKET"), "\(help.standardOutput)")
    }
}
