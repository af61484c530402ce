import ContextBusObjectGraph
import ContextBusWire

/// `ctxbus store get ID… [--to-many values|faults]`.
struct StoreGetCommand: Command {
    static let configuration = CommandConfiguration(
        name: "get", abstract: "Get objects by ID.",
        discussion: """
            Sends store.get. Prints a table per entity; IDs with no object are listed on standard error \
            (the exit status stays 0). With --json, the result as one JSON value ({"txn","objects","missing"}).
            """,
        arguments: [ArgumentSpec("id", help: "An object ID like Device/3.", isRepeating: true)],
        options: [StoreCommands.readToManyOption],
        service: .store,
        examples: ["ctxbus store get Device/1 Reading/12", "ctxbus store get Device/1 --to-many faults"])

    let params: GetParams

    init(_ arguments: ParsedArguments) throws(UsageError) {
        var ids: [ObjectID] = []
        for word in arguments.positional("id") {
            guard let id = ObjectID(string: word) else {
                throw UsageError("invalid object ID '\(word)': expected Entity/number, e.g. Device/3")
            }
            ids.append(id)
        }
        params = GetParams(ids: ids, toMany: try arguments.choice("to-many", of: ReadToMany.self) ?? .values)
    }

    func run(in context: CommandContext) async throws {
        let console = context.console
        try await context.withClient { client in
            let answer = try await client.call(method: StoreGet.name, params: params.json)
            if console.isJSON { return console.json(answer) }
            let result = try StoreObjectList(getResult: answer)
            let rendering = ObjectRendering(model: await StoreCommands.model(from: client))
            console.lines(rendering.lines(for: result.objects))
            for id in result.missing { console.error("\(id) does not exist (txn \(result.txn))") }
        }
    }
}
