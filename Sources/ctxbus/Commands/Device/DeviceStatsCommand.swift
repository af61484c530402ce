import ContextBusWire

/// `ctxbus device stats`.
struct DeviceStatsCommand: Command {
    static let configuration = CommandConfiguration(
        name: "stats", abstract: "Print the device service's counters (docs/protocol.md, device.stats).",
        service: .device,
        examples: ["ctxbus device stats", "ctxbus device stats --json"])

    init(_ arguments: ParsedArguments) throws(UsageError) {}

    func run(in context: CommandContext) async throws {
        let result = try await context.withClient { try await $0.call(DeviceStats.self) }
        let console = context.console
        if console.isJSON { return console.json(result.json) }
        let failed = result.chains.failed.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }
        var rows: [[String]] = [
            ["connections", String(result.connections)],
            ["bluezAvailable", result.bluezAvailable ? "yes" : "no"],
            ["chains started", String(result.chains.started)],
            ["chains succeeded", String(result.chains.succeeded)],
            ["chains failed (code:chains)", failed.isEmpty ? "-" : failed.joined(separator: " ")],
            ["chains cancelled", String(result.chains.cancelled)],
            ["chains running", String(result.chains.running)],
            ["chains queued", String(result.chains.queued)],
            ["connects", String(result.connects)],
            ["recordings saved", String(result.recordingsSaved)],
            ["recordings failed", String(result.recordingsFailed)],
        ]
        for (address, depth) in result.queues.sorted(by: { $0.key < $1.key }) {
            rows.append(["queue \(address) (running/waiting)", "\(depth.running)/\(depth.waiting)"])
        }
        console.lines(Table(["counter", "value"], rows: rows).lines)
    }
}
