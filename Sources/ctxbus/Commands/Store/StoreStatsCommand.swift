import ContextBusWire

/// `ctxbus store stats`.
struct StoreStatsCommand: Command {
    static let configuration = CommandConfiguration(
        name: "stats", abstract: "Print the store service's counters (docs/protocol.md, store.stats).",
        service: .store,
        examples: ["ctxbus store stats", "ctxbus store stats --json"])

    init(_ arguments: ParsedArguments) throws(UsageError) {}

    func run(in context: CommandContext) async throws {
        let result = try await context.withClient { try await $0.call(StoreStats.self) }
        let console = context.console
        if console.isJSON { return console.json(result.json) }
        console.lines(Self.table(for: result).lines)
    }

    /// One row per counter, `groupSizes` and `history` spelled out, other counters sorted by name.
    static func table(for stats: StatsResult) -> Table {
        var rows: [[String]] = [
            ["connections", String(stats.connections)], ["subscriptions", String(stats.subscriptions)],
            ["commits", String(stats.commits)], ["saves", String(stats.saves)],
        ]
        let sizes = stats.groupSizes.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }
        rows.append(["groupSizes (size:commits)", sizes.isEmpty ? "-" : sizes.joined(separator: " ")])
        rows.append([
            "history (oldest..newest)",
            "\(stats.historyOldest.map(String.init) ?? "-")..\(stats.historyNewest.map(String.init) ?? "-")",
        ])
        for (key, value) in stats.other.sorted(by: { $0.key < $1.key }) { rows.append([key, ValueText.text(value)]) }
        return Table(["counter", "value"], rows: rows)
    }
}
