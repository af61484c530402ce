/// One `ctxbus` command (`ctxbus store fetch`): its declaration, how it reads its parsed
/// arguments, and what it does.
///
/// Reading arguments is separate from running, so that every usage error is found before a
/// socket is opened, and so that tests can check the parsing of each command alone.
protocol Command: Sendable {
    /// Name, options, arguments and help.
    static var configuration: CommandConfiguration { get }

    /// Reads the parsed command line.
    ///
    /// - Throws: `UsageError` for values that do not fit (a bad number, a bad chain step).
    init(_ arguments: ParsedArguments) throws(UsageError)

    /// Does the work, writing to `context.console`.
    ///
    /// - Throws: `CommandFailure`, `RPCError`, `BusClientError`; the tool turns them into a
    ///   message and an exit status (`ExitStatus`).
    func run(in context: CommandContext) async throws
}

/// A word that groups commands (`store`, `device`).
struct CommandGroup: Sendable {
    var name: String
    var abstract: String
    var discussion: String = ""
    var commands: [any Command.Type]

    /// The command named `name`, if the group has one.
    func command(named name: String) -> (any Command.Type)? {
        commands.first { $0.configuration.name == name }
    }
}
