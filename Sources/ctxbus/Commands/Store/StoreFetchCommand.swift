import ContextBusWire

/// `ctxbus store fetch ENTITY [--where P] [--arg k=v]… [--sort [-]key]… [--limit N] [--offset N]
/// [--count | --ids] [--to-many values|faults]`.
struct StoreFetchCommand: Command {
    static let configuration = CommandConfiguration(
        name: "fetch", abstract: "Fetch the objects of one entity that match a predicate.",
        discussion: """
            Sends store.fetch. Prints a table of the objects (columns in the model's order, binary values \
            in hex, - for null) and a summary line; with --json, the result as one JSON value \
            ({"txn","objects"|"ids"|"count"}).
            """,
        arguments: [ArgumentSpec("entity", help: "The entity to fetch, e.g. Reading.")],
        options: StoreCommands.predicateOptions + [
            .repeating(
                "sort", valueName: "[-]key",
                help: "Sort by this key path, ascending; '-' in front for descending (-time). Repeat the "
                    + "option or separate keys with commas for several (-time,characteristic)."),
            .value("limit", valueName: "n", help: "At most n objects."),
            .value("offset", valueName: "n", help: "Skip the first n objects."),
            .flag("count", help: "Print only the number of matching objects."),
            .flag("ids", help: "Print only the IDs of the matching objects, one per line."),
            StoreCommands.readToManyOption,
        ],
        service: .store,
        examples: [
            "ctxbus store fetch Device",
            "ctxbus store fetch Reading --where 'value > $min' --arg min=20 --sort -time --limit 10",
            "ctxbus store fetch Reading --where 'device.address == $a' --arg a=AA:BB:CC:DD:EE:01 --count",
            "ctxbus store fetch Device --to-many faults",
        ])

    let params: FetchParams

    init(_ arguments: ParsedArguments) throws(UsageError) {
        guard let entity = arguments.firstPositional("entity") else { throw .missingArgument("entity") }
        let count = arguments.flag("count")
        let ids = arguments.flag("ids")
        if count && ids { throw UsageError("--count and --ids cannot be used together") }
        params = FetchParams(
            entity: entity, predicate: arguments.value("where"),
            arguments: try KeyValueArgument.object(arguments.values("arg"), option: "--arg"),
            sort: try SortArgument.descriptors(arguments.values("sort")),
            limit: try arguments.integer("limit", atLeast: 0), offset: try arguments.integer("offset", atLeast: 0) ?? 0,
            resultType: count ? .count : ids ? .ids : .objects,
            toMany: try arguments.choice("to-many", of: ReadToMany.self) ?? .values)
    }

    func run(in context: CommandContext) async throws {
        let console = context.console
        try await context.withClient { client in
            let answer = try await StoreCommands.reportingPredicateErrors(params.predicate) {
                try await client.call(method: StoreFetch.name, params: params.json)
            }
            if console.isJSON { return console.json(answer) }
            let result = try StoreObjectList(fetchResult: answer)
            switch result.content {
            case .count(let count):
                console.line(String(count))
            case .ids(let ids):
                console.lines(ids.map(\.description))
            case .objects(let objects):
                let rendering = ObjectRendering(model: await StoreCommands.model(from: client))
                if !objects.isEmpty {
                    console.lines(rendering.table(for: objects, entity: params.entity).lines)
                }
                let noun = objects.count == 1 ? "object" : "objects"
                console.line("(\(objects.count) \(noun) of \(params.entity), txn \(result.txn))")
            }
        }
    }
}
