import TestSupport
import Testing

@testable import ctxbus

struct CommandLineToolTests {
    let tool = CommandLineTool(environment: [:])

    static let everyCommand: [(String, String)] = CommandLineTool.groups.flatMap { group in
        group.commands.map { (group.name, $0.configuration.name) }
    }

    @Test func hasEveryCommandOfTheIssue() {
        expectEqual(
            Self.everyCommand.map { "\($0) \($1)" },
            [
                "store model", "store fetch", "store get", "store save", "store batch", "store aggregate",
                "store watch", "store history", "store stats", "store backup",
                "device adapters", "device list", "device scan", "device run", "device watch", "device discover",
                "device services", "device events", "device cancel", "device stats", "fleet status", "fleet run",
                "model swift",
            ])
        expectEqual(CommandLineTool.commands.map { $0.configuration.name }, ["ping", "metrics"])
    }

    @Test(arguments: ["ping", "metrics"])
    func topLevelCommandsHaveHelp(command: String) {
        guard case .help(let text) = tool.invocation(for: [command, "--help"]) else {
            Issue.record("no help for \(command)")
            return
        }
        expectTrue(text.contains("USAGE: ctxbus \(command) [<service>]"), "\(text)")
        expectTrue(text.contains("--timeout <seconds>"))
    }

    @Test(arguments: everyCommand)
    func everyCommandHasHelpWithUsageAndOptions(group: String, command: String) {
        guard case .help(let text) = tool.invocation(for: [group, command, "--help"]) else {
            Issue.record("no help for \(group) \(command)")
            return
        }
        expectTrue(text.hasPrefix("OVERVIEW: "))
        expectTrue(text.contains("USAGE: ctxbus \(group) \(command)"))
        expectTrue(text.contains("-h, --help"))
        // Every command that talks to a service takes its socket; `model swift` talks to none.
        let service = CommandLineTool.groups.first { $0.name == group }?.command(named: command)?.configuration.service
        expectEqual(text.contains("--socket <path>"), service != nil)
        expectTrue(text.contains("--json"))
        expectTrue(text.contains("EXAMPLES:\n  ctxbus \(group) \(command)"))
        expectTrue(text.split(separator: "\n").allSatisfy { $0.count <= 100 }, "a help line is wider than 100 columns")
    }

    @Test(arguments: [["--help"], ["-h"], ["help"], ["store", "--help"], ["device", "help"]])
    func groupsAndTheToolHaveHelp(words: [String]) {
        guard case .help(let text) = tool.invocation(for: words) else {
            Issue.record("no help for \(words)")
            return
        }
        expectTrue(text.contains("SUBCOMMANDS:"))
    }

    @Test func theToolsHelpDocumentsEveryExitStatusAndTheEnvironment() {
        let help = CommandLineTool.rootHelp
        for status in ExitStatus.allCases { expectTrue(help.contains("  \(status.rawValue) ")) }
        expectTrue(help.contains("CTXBUS_STORE_SOCKET"))
        expectTrue(help.contains("CTXBUS_DEVICE_SOCKET"))
    }

    @Test(arguments: [
        ([], "missing <store|device|fleet|model>"),
        (["cache"], "unknown command 'cache'"),
        (["store"], "missing <subcommand> for 'ctxbus store'"),
        (["store", "drop"], "unknown command 'ctxbus store drop'"),
        (["store", "fetch"], "missing <entity>"),
        (["store", "fetch", "Reading", "--limit", "ten"], "invalid value 'ten' for '--limit'"),
        (["store", "fetch", "Reading", "--count", "--ids"], "--count and --ids cannot be used together"),
        (["store", "fetch", "Reading", "--arg", "min"], "invalid --arg 'min': expected name=value"),
        (["store", "watch", "--where", "a == 1"], "--where needs an <entity>"),
        (["store", "get", "Device/x"], "invalid object ID 'Device/x'"),
        (["store", "fetch", "Device", "--to-many", "changes"], "invalid value 'changes' for '--to-many'"),
        (["store", "get", "Device/1", "--to-many", "none"], "invalid value 'none' for '--to-many'"),
        (["store", "watch", "Device", "--to-many", "faults"], "invalid value 'faults' for '--to-many'"),
        (
            ["store", "save", "--delete", "Device/1", "--durability", "fast"],
            "invalid value 'fast' for '--durability': expected disk or memory"
        ),
        (
            ["store", "save", "--delete", "Device/1", "--merge-policy", "mine"],
            "invalid value 'mine' for '--merge-policy': expected error, objectTrump, storeTrump, overwrite or rollback"
        ),
        (["device", "run", "AA:BB", "connect"], "invalid address 'AA:BB'"),
        (["device", "run", "AA:BB:CC:DD:EE:01"], "missing <step>"),
        (["device", "run", "AA:BB:CC:DD:EE:01", "connect", "raed:2a19"], "invalid chain step 2 'raed:2a19'"),
        (["device", "scan", "--seconds", "0"], "invalid value '0' for '--seconds'"),
        (["fleet", "run", "a.b", "AA:BB:CC:DD:EE:01", "connect"], "invalid gateway 'a.b'"),
        (["fleet", "run", "a", "AA:BB:CC:DD:EE:01"], "missing <step>"),
        (["fleet", "run", "a", "AA:BB:CC:DD:EE:01", "connect", "--id", "x y"], "invalid --id 'x y'"),
    ])
    func badCommandLinesAreUsageErrorsWithTheUsageLine(words: [String], message: String) {
        guard case .usageError(let error, let usage) = tool.invocation(for: words) else {
            Issue.record("\(words) was accepted")
            return
        }
        expectTrue(error.message.hasPrefix(message), "\(error.message)")
        expectTrue(usage.contains("USAGE: ctxbus"))
    }

    @Test func aChainErrorCarriesTheCaretLines() {
        guard
            case .usageError(let error, _) = tool.invocation(for: [
                "device", "run", "AA:BB:CC:DD:EE:01", "connect", "write:2a06=1",
            ])
        else {
            Issue.record("accepted")
            return
        }
        expectEqual(error.detail, ["  connect write:2a06=1", "                      ^"])
    }

    @Test func aValidCommandLineRunsItsCommand() {
        guard case .run(let command, let configuration, _) = tool.invocation(for: ["store", "fetch", "Reading"]) else {
            Issue.record("not run")
            return
        }
        expectEqual(configuration.name, "fetch")
        expectEqual((command as? StoreFetchCommand)?.params.entity, "Reading")
        expectEqual((command as? StoreFetchCommand)?.params.toMany, .values)
    }

    @Test func toManyChoosesHowReadsAndWatchesCarryToManyRelationships() {
        func command(_ words: [String]) -> (any Command)? {
            guard case .run(let command, _, _) = tool.invocation(for: words) else { return nil }
            return command
        }
        expectEqual(
            (command(["store", "fetch", "Device", "--to-many", "faults"]) as? StoreFetchCommand)?.params.toMany, .faults
        )
        expectEqual(
            (command(["store", "get", "Device/1", "--to-many=faults"]) as? StoreGetCommand)?.params.toMany, .faults)
        expectEqual((command(["store", "get", "Device/1"]) as? StoreGetCommand)?.params.toMany, .values)
        expectEqual(
            (command(["store", "watch", "--to-many", "changes"]) as? StoreWatchCommand)?.params.toMany, .changes)
        expectEqual((command(["store", "watch"]) as? StoreWatchCommand)?.params.toMany, .values)
    }
}
