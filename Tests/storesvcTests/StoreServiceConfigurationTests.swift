import BusProtocol
import Testing

@testable import storesvc

@Suite struct StoreServiceConfigurationTests {
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
        #expect(configuration.socketPath == "/run/user/1000/ctxbus/store.sock")
        #expect(configuration.databasePath == "/home/u/.local/share/ctxbus/store.sqlite")
        #expect(configuration.modelPath == nil)
        #expect(configuration.maxFrame == 16 * 1024 * 1024)
        #expect(configuration.maxInFlight == 1024)
        #expect(configuration.maxOutbound == 8 * 1024 * 1024)
        #expect(configuration.socketMode == 0o660)
        #expect(configuration.allowedUIDs == [1000, 0])
        #expect(configuration.historyRetention == 100_000)
        #expect(configuration.logLevel == .info)
    }

    @Test func explicitDirectoriesWinOverXDG() throws {
        let configuration = try parse(
            [],
            environment: [
                "CTXBUS_RUNTIME_DIR": "/tmp/rt", "XDG_RUNTIME_DIR": "/run/user/1", "CTXBUS_DATA_DIR": "/var/lib/cb",
            ])
        #expect(configuration.socketPath == "/tmp/rt/store.sock")
        #expect(configuration.databasePath == "/var/lib/cb/store.sqlite")
    }

    @Test func withoutAnyEnvironmentEverythingIsRelative() throws {
        let configuration = try parse([])
        #expect(configuration.socketPath == "./run/store.sock")
        #expect(configuration.databasePath == "./data/store.sqlite")
    }

    @Test func everyFlagIsRead() throws {
        let configuration = try parse([
            "--socket", "/tmp/s.sock", "--database=/tmp/db.sqlite", "--model", "m.json", "--max-frame", "1024",
            "--max-in-flight", "8", "--max-outbound", "65536", "--socket-mode", "0600", "--allow-uid", "42",
            "--allow-uid", "43", "--allow-gid", "100", "--history", "500", "--log-level", "debug",
        ])
        #expect(configuration.socketPath == "/tmp/s.sock")
        #expect(configuration.databasePath == "/tmp/db.sqlite")
        #expect(configuration.modelPath == "m.json")
        #expect(configuration.maxFrame == 1024)
        #expect(configuration.maxInFlight == 8)
        #expect(configuration.maxOutbound == 65536)
        #expect(configuration.socketMode == 0o600)
        #expect(configuration.allowedUIDs == [1000, 0, 42, 43])
        #expect(configuration.allowedGIDs == [100])
        #expect(configuration.historyRetention == 500)
        #expect(configuration.logLevel == .debug)
        #expect(configuration.allows(uid: 43, gid: 5))
        #expect(configuration.allows(uid: 7, gid: 100))
        #expect(!configuration.allows(uid: 7, gid: 5))
    }

    @Test func helpWinsWherePossible() throws {
        #expect(try StoreServiceConfiguration.parse(arguments: ["--socket", "x", "-h"], environment: [:]) == .help)
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
        (["stray"], .unexpectedArgument("stray")),
        (["--database="], .invalidValue(flag: "--database", value: "", expected: "a path")),
    ])
    func badCommandLinesAreRefusedByName(arguments: [String], expected: ConfigurationError) {
        #expect(throws: expected) {
            try StoreServiceConfiguration.parse(arguments: arguments, environment: [:], identity: user)
        }
        #expect(expected.description.contains(arguments[0].split(separator: "=").first.map(String.init) ?? ""))
    }

    @Test func rootIsListedOnceWhenTheServiceRunsAsRoot() throws {
        let outcome = try StoreServiceConfiguration.parse(
            arguments: [], environment: [:], identity: .init(uid: 0, gid: 0))
        guard case .run(let configuration) = outcome else {
            Issue.record("expected a configuration")
            return
        }
        #expect(configuration.allowedUIDs == [0])
    }
}
