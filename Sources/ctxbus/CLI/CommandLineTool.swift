import ContextBusClient
import ContextBusSupport
import ContextBusWire
import Dispatch

/// `ctxbus`: finds the command the words name, parses its arguments, runs it, and turns what
/// happened into messages and an exit status.
struct CommandLineTool: Sendable {
    /// `ctxbus store …`, `ctxbus device …`, `ctxbus fleet …` and `ctxbus model …`.
    static let groups: [CommandGroup] = [
        StoreCommands.group, DeviceCommands.group, FleetCommands.group, ModelCommands.group,
    ]

    /// Commands of their own, not in a group: `ctxbus ping`, `ctxbus metrics`.
    static let commands: [any Command.Type] = [PingCommand.self, MetricsCommand.self]

    /// What a command line asks for.
    enum Invocation {
        /// Print this help and exit 0.
        case help(String)
        /// A bad command line: the error and the usage text to print with it.
        case usageError(UsageError, usage: String)
        /// Run this command.
        case run(any Command, CommandConfiguration, ParsedArguments)
    }

    let environment: [String: String]

    init(environment: [String: String]) {
        self.environment = environment
    }

    // MARK: - Resolving

    /// Reads the words after `ctxbus`.
    func invocation(for words: [String]) -> Invocation {
        let formatter = HelpFormatter()
        guard let groupName = words.first, groupName != "--help", groupName != "-h", groupName != "help" else {
            return words.isEmpty
                ? .usageError(UsageError("missing <store|device|fleet|model>"), usage: Self.rootHelp)
                : .help(Self.rootHelp)
        }
        if let commandType = Self.commands.first(where: { $0.configuration.name == groupName }) {
            return invocation(of: commandType, arguments: Array(words.dropFirst()), path: "ctxbus")
        }
        guard let group = Self.groups.first(where: { $0.name == groupName }) else {
            return .usageError(UsageError("unknown command '\(groupName)'"), usage: Self.rootHelp)
        }
        let rest = Array(words.dropFirst())
        let groupHelp = formatter.help(for: group, path: "ctxbus")
        guard let commandName = rest.first, commandName != "--help", commandName != "-h", commandName != "help" else {
            return rest.isEmpty
                ? .usageError(UsageError("missing <subcommand> for 'ctxbus \(group.name)'"), usage: groupHelp)
                : .help(groupHelp)
        }
        guard let commandType = group.command(named: commandName) else {
            return .usageError(UsageError("unknown command 'ctxbus \(group.name) \(commandName)'"), usage: groupHelp)
        }
        return invocation(of: commandType, arguments: Array(rest.dropFirst()), path: "ctxbus \(group.name)")
    }

    /// Reads the arguments of the command `commandType`, whose words are `path` then its name.
    private func invocation(of commandType: any Command.Type, arguments words: [String], path: String) -> Invocation {
        let formatter = HelpFormatter()
        let configuration = commandType.configuration
        do {
            switch try ArgumentParser(configuration).parse(words) {
            case .help:
                return .help(formatter.help(for: configuration, path: path))
            case .arguments(let arguments):
                return .run(try commandType.init(arguments), configuration, arguments)
            }
        } catch {
            return .usageError(
                error,
                usage: "USAGE: \(formatter.usage(for: configuration, path: path))\n\n"
                    + "See '\(path) \(configuration.name) --help'.")
        }
    }

    // MARK: - Running

    /// Runs the command line and returns the exit status. Blocks the calling thread, which must be the
    /// main thread (it takes SIGINT and SIGTERM; see `ShutdownSignals`).
    func main(_ words: [String]) -> Int32 {
        switch invocation(for: words) {
        case .help(let text):
            print(text)
            return ExitStatus.success.rawValue
        case .usageError(let error, let usage):
            StandardStream.error.write("ctxbus: \(error)\n\n\(usage)\n")
            return ExitStatus.usage.rawValue
        case .run(let command, let configuration, let arguments):
            return run(command, configuration: configuration, arguments: arguments)
        }
    }

    private func run(
        _ command: any Command, configuration: CommandConfiguration, arguments: ParsedArguments
    )
        -> Int32
    {
        let console = Console.standard(format: arguments.flag("json") ? .json : .table)
        let interruption = Interruption()
        let streams = configuration.streamsUntilInterrupted
        let signals = ShutdownSignals.install(exitsAfterHandler: false) { signal in
            interruption.trigger(signal)
            if !streams {
                console.progress(nil)
                exitProcess(128 + signal)
            }
        }
        defer { signals.cancel() }
        let context = CommandContext(
            console: console,
            endpoint: configuration.service.map {
                ServiceEndpoint.resolve($0, flag: arguments.value("socket"), environment: environment)
            },
            interruption: interruption, environment: environment)
        let status = Locked(ExitStatus.success)
        let finished = DispatchSemaphore(value: 0)
        Task.detached {
            do {
                try await command.run(in: context)
            } catch _ where streams && interruption.signal != nil {
                // Interrupted while still connecting or subscribing: a stopped watch, not a failure.
            } catch {
                let failed = Self.report(error, on: console)
                status.withLock { $0 = failed }
            }
            console.progress(nil)
            finished.signal()
        }
        finished.wait()
        return status.withLock { $0 }.rawValue
    }

    /// Prints what went wrong and picks the exit status.
    static func report(_ error: any Error, on console: Console) -> ExitStatus {
        switch error {
        case let failure as CommandFailure:
            if console.isJSON, let rpc = failure.serviceError { console.json(.object(["error": rpc.json])) }
            for line in failure.lines { console.error(line) }
            return failure.status
        case let usage as UsageError:
            console.error(usage.description)
            return .usage
        case let rpc as RPCError:
            if console.isJSON { console.json(.object(["error": rpc.json])) }
            console.error("the service answered \(rpc)")
            return .serviceError
        case let client as BusClientError:
            if case .malformedResult = client {
                console.error(client.description)
                return .serviceError
            }
            console.error(client.description)
            return .unreachable
        default:
            console.error("\(error)")
            return .serviceError
        }
    }
}
