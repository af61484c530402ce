import ContextBusObjectGraph
import ContextBusSupport
import ContextBusWire

/// `ctxbus store batch ENTITY [--where P] [--arg k=v]… (--set key=value… | --delete) [--author NAME]
/// [--durability disk|memory]`.
struct StoreBatchCommand: Command {
    static let configuration = CommandConfiguration(
        name: "batch", abstract: "Change or delete every object of an entity that matches a predicate.",
        discussion: """
            Sends store.batch: one transaction, visible in store.changed events and the history like a \
            save of those objects (delete rules apply; a deny that blocks any object fails it all). Prints \
            the transaction and how many objects matched; with --json, the result ({"txn","count"}).
            """,
        arguments: [ArgumentSpec("entity", help: "The entity, e.g. Reading.")],
        options: StoreCommands.predicateOptions + [
            .repeating(
                "set", valueName: "key=value",
                help: "Write this value over every matching object (values read as in --arg; a to-one "
                    + "relationship as an ID like Device/3)."),
            .flag("delete", help: "Delete every matching object."),
            .value("author", valueName: "name", help: "The author recorded with the transaction."),
            .value(
                "durability", valueName: "disk|memory",
                help: "disk (default): answer once durable; memory: once the root accepted it."),
        ],
        service: .store,
        examples: [
            "ctxbus store batch Reading --where 'time < $cutoff' --arg cutoff=2026-01-01T00:00:00Z --delete",
            "ctxbus store batch Device --where 'lastSeen == nil' --set connected=false",
        ])

    let params: JSONValue
    let predicate: String?

    init(_ arguments: ParsedArguments) throws(UsageError) {
        guard let entity = arguments.firstPositional("entity") else { throw .missingArgument("entity") }
        let set = try KeyValueArgument.object(arguments.values("set"), option: "--set")
        let delete = arguments.flag("delete")
        guard set.isEmpty != !delete else { throw UsageError("give --set key=value… or --delete (one of them)") }
        predicate = arguments.value("where")
        var members: [String: JSONValue] = ["entity": .string(entity)]
        if let predicate { members["where"] = .string(predicate) }
        let args = try KeyValueArgument.object(arguments.values("arg"), option: "--arg")
        if !args.isEmpty { members["args"] = .object(args) }
        if delete { members["delete"] = .bool(true) } else { members["set"] = .object(set) }
        if let author = arguments.value("author") { members["author"] = .string(author) }
        if let durability: Durability = try arguments.choice("durability") {
            members["durability"] = .string(durability.rawValue)
        }
        params = .object(members)
    }

    func run(in context: CommandContext) async throws {
        let console = context.console
        let answer = try await context.withClient { client in
            try await StoreCommands.reportingPredicateErrors(predicate) {
                try await client.call(method: StoreBatch.name, params: params)
            }
        }
        if console.isJSON { return console.json(answer) }
        let result = try BatchResult(json: answer)
        let noun = result.count == 1 ? "object" : "objects"
        if let txn = result.txn {
            console.line("txn \(txn): \(result.count) \(noun) matched")
        } else {
            console.line("nothing written: \(result.count) \(noun) matched")
        }
    }
}
