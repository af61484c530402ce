import ContextBusWire

/// `ctxbus fleet …`: the fleet bridge's methods (docs/fleet.md).
enum FleetCommands {
    static let group = CommandGroup(
        name: "fleet", abstract: "The fleet bridge (fleetsvc): its status, commands for other gateways.",
        commands: [FleetStatusCommand.self, FleetRunCommand.self])
}

/// `ctxbus fleet status`.
struct FleetStatusCommand: Command {
    static let configuration = CommandConfiguration(
        name: "status", abstract: "Print the fleet bridge's state and counters (fleet.status, docs/fleet.md).",
        service: .fleet,
        examples: ["ctxbus fleet status", "ctxbus fleet status --json"])

    init(_ arguments: ParsedArguments) throws(UsageError) {}

    func run(in context: CommandContext) async throws {
        let result = try await context.withClient { try await $0.call(FleetStatus.self) }
        let console = context.console
        if console.isJSON { return console.json(result.json) }
        console.lines(Self.table(for: result).lines)
    }

    /// One row per member, the applied transactions per gateway spelled out, other counters sorted by name.
    static func table(for status: FleetStatusResult) -> Table {
        var rows: [[String]] = [
            ["gateway", status.gateway], ["fleet", status.fleet], ["state", status.state],
            ["connected", String(status.isConnected)], ["published", String(status.published)],
        ]
        let applied = status.applied.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }
        rows.append(["applied (gateway:txn)", applied.isEmpty ? "-" : applied.joined(separator: " ")])
        rows.append(["pending", String(status.pending)])
        rows.append(["refused", String(status.refused)])
        for (key, value) in status.counters.sorted(by: { $0.key < $1.key }) { rows.append([key, String(value)]) }
        return Table(["", "value"], rows: rows)
    }
}
