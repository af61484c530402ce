import ContextBusObjectGraph
import ContextBusWire

/// `ctxbus store history [--since TXN] [--limit N]`.
struct StoreHistoryCommand: Command {
    static let configuration = CommandConfiguration(
        name: "history", abstract: "List committed transactions, oldest first.",
        discussion: """
            Sends store.history: the transactions after --since (default 0: all the history kept), at most \
            --limit of them (the service caps a call at 1000; page by passing the last txn as --since). \
            With --json, the result as one JSON value ({"transactions":[…]}).
            """,
        options: [
            .value("since", valueName: "txn", help: "Only transactions after txn (default 0)."),
            .value("limit", valueName: "n", help: "At most n transactions (default and maximum: 1000)."),
        ],
        service: .store,
        examples: ["ctxbus store history --since 1200 --limit 20"])

    let params: HistoryParams

    init(_ arguments: ParsedArguments) throws(UsageError) {
        params = HistoryParams(
            since: Int64(try arguments.integer("since", atLeast: 0) ?? 0),
            limit: try arguments.integer("limit", atLeast: 1))
    }

    func run(in context: CommandContext) async throws {
        let result = try await context.withClient { try await $0.call(StoreHistory.self, params) }
        let console = context.console
        if console.isJSON { return console.json(result.json) }
        let rows = result.transactions.map { transaction in
            [
                String(transaction.txn), transaction.time.rfc3339String, transaction.author ?? "-",
                Self.list(transaction.inserted), Self.list(transaction.updated), Self.list(transaction.deleted),
            ]
        }
        console.lines(Table(["txn", "time", "author", "inserted", "updated", "deleted"], rows: rows).lines)
        let noun = result.transactions.count == 1 ? "transaction" : "transactions"
        console.line("(\(result.transactions.count) \(noun) after txn \(params.since))")
    }

    private static func list(_ ids: [ObjectID]) -> String {
        ids.isEmpty ? "-" : ids.map(\.description).joined(separator: ",")
    }
}
