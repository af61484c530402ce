import TestSupport
import Testing

@testable import ContextBusServer
@testable import storesvc

struct StoreServiceConfigurationTests {
    let user = StoreServiceConfiguration.Identity(uid: 1000, gid: 1000)

    private func parse(_ arguments: [String], environment: [String: String] = [:]) throws -> StoreServiceConfiguration {
        guard
            case .run(let configuration) = try StoreServiceConfiguration.parse(
                arguments: arguments, environment: environment, identity: user)
        else {
            Issue.record("expected a configuration, got help")
            throw ConfigurationError.unknownFlag("help")
        }
        return configuration
    }

    @Test func defaultsFollowTheRuntimeAndDataDirectories() throws {
        let configuration = try parse([], environment: ["XDG_RUNTIME_DIR": "/run/user/1000", "HOME": "/home/u"])
        expectEqual(configuration.socketPath, "/run/user/1000/ctxbus/store.sock")
        expectEqual(configuration.databasePath, "/home/u/.local/share/ctxbus/store.sqlite")
        expectNil(configuration.modelPath)
        expectEqual(configuration.maxFrame, 16 * 1024 * 1024)
        expectEqual(configuration.maxInFlight, 1024)
        expectEqual(configuration.maxOutbound, 8 * 1024 * 1024)
        expectEqual(configuration.socketMode, 0o660)
        expectEqual(configuration.allowedUIDs, [1000, 0])
        expectEqual(configuration.historyRetention, 100_000)
        expectNil(configuration.pageSize)
        expectEqual(configuration.logLevel, .info)
    }

    @Test func explicitDirectoriesWinOverXDG() throws {
        let configuration = try parse(
            [],
            environment: [
                "CTXBUS_RUNTIME_DIR": "/tmp/rt", "XDG_RUNTIME_DIR": "/run/user/1", "CTXBUS_DATA_DIR": "/var/lib/cb",
            ])
        expectEqual(configuration.socketPath, "/tmp/rt/store.sock")
        expectEqual(configuration.databasePath, "/var/lib/cb/store.sqlite")
    }

    @Test func withoutAnyEnvironmentEverythingIsRelative() throws {
        let configuration = try parse([])
        expectEqual(configuration.socketPath, "./run/store.sock")
        expectEqual(configuration.databasePath, "./data/store.sqlite")
    }

    @Test func everyFlagIsRead() throws {
        let configuration = try parse([
            "--socket", "/tmp/s.sock", "--database=/tmp/db.sqlite", "--model", "m.json", "--max-frame", "1024",
            "--max-in-flight", "8", "--max-outbound", "65536", "--socket-mode", "0600", "--allow-uid", "42",
            "--allow-uid", "43", "--allow-gid", "100", "--history", "500", "--page-size", "2048",
            "--log-level", "debug",
        ])
        expectEqual(configuration.socketPath, "/tmp/s.sock")
        expectEqual(configuration.databasePath, "/tmp/db.sqlite")
        expectEqual(configuration.modelPath, "m.json")
        expectEqual(configuration.maxFrame, 1024)
        expectEqual(configuration.maxInFlight, 8)
        expectEqual(configuration.maxOutbound, 65536)
        expectEqual(configuration.socketMode, 0o600)
        expectEqual(configuration.allowedUIDs, [1000, 0, 42, 43])
        expectEqual(configuration.allowedGIDs, [100])
        expectEqual(configuration.historyRetention, 500)
        expectEqual(configuration.pageSize, 2048)
        expectEqual(configuration.logLevel, .debug)
        expectTrue(configuration.allows(uid: 43, gid: 5))
        expectTrue(configuration.allows(uid: 7, gid: 100))
        expectFalse(configuration.allows(uid: 7, gid: 5))
    }

    @Test func helpWinsWherePossible() throws {
        try expectEqual(StoreServiceConfiguration.parse(arguments: ["--socket", "x", "-h"], environment: [:]), .help)
    }

    @Test(arguments: [
        (["--bogus"], ConfigurationError.unknownFlag("--bogus")),
        (["--socket"], .missingValue(flag: "--socket")),
        (["--max-frame", "ten"], .invalidValue(flag: "--max-frame", value: "ten", expected: "an integer ≥ 64")),
        (["--max-in-flight", "0"], .invalidValue(flag: "--max-in-flight", value: "0", expected: "an integer ≥ 1")),
        (
            ["--socket-mode", "999"],
            .invalidValue(flag: "--socket-mode", value: "999", expected: "an octal mode such as 0660")
        ),
        (
            ["--log-level", "loud"],
            .invalidValue(flag: "--log-level", value: "loud", expected: "error, warning, info, debug")
        ),
        (
            ["--allow-uid", "-1"],
            .invalidValue(flag: "--allow-uid", value: "-1", expected: "an integer from 0 to 4294967295")
        ),
        (
            ["--page-size", "3000"],
            .invalidValue(flag: "--page-size", value: "3000", expected: "a power of two from 512 to 65536")
        ),
        (
            ["--page-size", "256"],
            .invalidValue(flag: "--page-size", value: "256", expected: "a power of two from 512 to 65536")
        ),
        (
            ["--retain-interval", "soon"],
            .invalidValue(flag: "--retain-interval", value: "soon", expected: "an interval like 60s, 15m or 1h")
        ),
        (
            ["--retain-interval", "0s"],
            .invalidValue(flag: "--retain-interval", value: "0s", expected: "an interval like 60s, 15m or 1h")
        ),
        (
            ["--retain-interval", "60"],
            .invalidValue(flag: "--retain-interval", value: "60", expected: "an interval like 60s, 15m or 1h")
        ),
        (["--retain-interval"], .missingValue(flag: "--retain-interval")),
        (["stray"], .unexpectedArgument("stray")),
        (["--database="], .invalidValue(flag: "--database", value: "", expected: "a path")),
    ])
    func badCommandLinesAreRefusedByName(arguments: [String], expected: ConfigurationError) {
        #expect(throws: expected) {
            try StoreServiceConfiguration.parse(arguments: arguments, environment: [:], identity: user)
        }
        expectTrue(expected.description.contains(arguments[0].split(separator: "=").first.map(String.init) ?? ""))
    }

    @Test func rootIsListedOnceWhenTheServiceRunsAsRoot() throws {
        let outcome = try StoreServiceConfiguration.parse(
            arguments: [], environment: [:], identity: .init(uid: 0, gid: 0))
        guard case .run(let configuration) = outcome else {
            Issue.record("expected a configuration")
            return
        }
        expectEqual(configuration.allowedUIDs, [0])
    }
}
