import ContextBusObjectGraph
import ContextBusSupport
import ContextBusWire

/// `ctxbus store aggregate ENTITY [--where P] [--arg k=v]… [--group-by key]… [--bucket key:seconds]
/// --value name=function…`.
struct StoreAggregateCommand: Command {
    static let configuration = CommandConfiguration(
        name: "aggregate", abstract: "Count, sum, average, or find the least or greatest values, per group.",
        discussion: """
            Sends store.aggregate. Functions: count, count:key, sum:key, avg:key, min:key, max:key. Prints \
            one row per group, its keys then its values; with --json, the result \
            ({"txn","groups":[{"key","values"}]}).
            """,
        arguments: [ArgumentSpec("entity", help: "The entity, e.g. Reading.")],
        options: StoreCommands.predicateOptions + [
            .repeating(
                "group-by", valueName: "key",
                help: "Group by this attribute or to-one relationship (repeatable, in order)."),
            .value(
                "bucket", valueName: "key:seconds",
                help: "Group a date attribute into windows of this many seconds, aligned to the Unix epoch."),
            .repeating("value", valueName: "name=function", help: "A value to compute per group, e.g. n=count."),
        ],
        service: .store,
        examples: [
            "ctxbus store aggregate Reading --group-by device --bucket time:3600 --value mean=avg:number",
            "ctxbus store aggregate Reading --where 'characteristic == \"2a19\"' --value last=max:time",
        ])

    let request: AggregateRequest
    let predicate: String?

    init(_ arguments: ParsedArguments) throws(UsageError) {
        guard let entity = arguments.firstPositional("entity") else { throw .missingArgument("entity") }
        var values: [String: AggregateRequest.Function] = [:]
        for word in arguments.values("value") {
            guard let equals = word.firstIndex(of: "="), equals != word.startIndex,
                let function = AggregateRequest.Function(String(word[word.index(after: equals)...]))
            else {
                throw .invalidValue(word, for: "value", expected: "name=function (count, sum:key, avg:key, …)")
            }
            values[String(word[..<equals])] = function
        }
        guard !values.isEmpty else { throw UsageError("give at least one --value name=function") }
        var bucket: AggregateRequest.Bucket?
        if let text = arguments.value("bucket") {
            let parts = text.split(separator: ":")
            guard parts.count == 2, let seconds = Int64(parts[1]), seconds > 0 else {
                throw .invalidValue(text, for: "bucket", expected: "key:seconds, e.g. time:3600")
            }
            bucket = AggregateRequest.Bucket(key: String(parts[0]), seconds: seconds)
        }
        predicate = arguments.value("where")
        var json: [String: JSONValue] = [
            "entity": .string(entity), "values": .object(values.mapValues { .string($0.description) }),
        ]
        if let predicate { json["where"] = .string(predicate) }
        let args = try KeyValueArgument.object(arguments.values("arg"), option: "--arg")
        if !args.isEmpty { json["args"] = .object(args) }
        do {
            var read = try AggregateRequest(json: .object(json))
            read.groupBy = arguments.values("group-by")
            read.bucket = bucket
            request = read
        } catch {
            throw UsageError(error.message)
        }
    }

    func run(in context: CommandContext) async throws {
        let console = context.console
        let params = request.json
        let answer = try await context.withClient { client in
            try await StoreCommands.reportingPredicateErrors(predicate) {
                try await client.call(method: StoreAggregate.name, params: params)
            }
        }
        if console.isJSON { return console.json(answer) }
        let result = try AggregateResult(json: answer)
        let keys = request.groupKeys
        let names = request.values.keys.sorted()
        let rows = result.groups.map { group in
            keys.map { ValueText.text(group.key[$0]?.jsonValue ?? .null, type: nil) }
                + names.map { ValueText.text(group.values[$0]?.jsonValue ?? .null, type: nil) }
        }
        console.lines(Table(keys + names, rows: rows).lines)
    }
}
