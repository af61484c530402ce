import ContextBusWire
import Foundation

/// `ctxbus device events [ADDRESS]`: streams `device.event` (`device.subscribe`) until Ctrl-C or SIGTERM (exit 0).
///
/// It was `device watch` until `device.watch` came: that name now belongs to `DeviceWatchCommand`.
struct DeviceEventsCommand: Command {
    static let configuration = CommandConfiguration(
        name: "events", abstract: "Print what BlueZ reports of devices (connected, disconnected, values) until Ctrl-C.",
        discussion: """
            Sends device.subscribe and prints every device.event: one line per event; with --json, each \
            event's params as one JSON value per line. It only listens: it connects nothing and turns no \
            notification on (see 'device watch'). Ctrl-C or SIGTERM ends it with exit status 0.
            """,
        arguments: [ArgumentSpec("address", help: "Only this device's events.", isOptional: true)],
        service: .device, streamsUntilInterrupted: true,
        examples: ["ctxbus device events", "ctxbus device events AA:BB:CC:DD:EE:01 --json"])

    let params: DeviceSubscribeParams

    init(_ arguments: ParsedArguments) throws(UsageError) {
        params = DeviceSubscribeParams(
            address: try arguments.firstPositional("address").map { (text) throws(UsageError) in
                try DeviceCommands.address(text)
            })
    }

    func run(in context: CommandContext) async throws {
        let console = context.console
        let client = try await context.connect()
        defer { client.close() }
        let events = client.eventStream(method: DeviceEvent.method)
        context.interruption.onInterrupt { _ in client.close() }
        _ = try await client.call(DeviceSubscribe.self, params)
        if !console.isJSON {
            console.note("watching \(params.address?.string ?? "every device"); Ctrl-C stops")
        }
        for await event in events {
            if console.isJSON {
                console.json(event.params)
            } else if let payload = try? event.payload(as: DeviceEvent.self) {
                console.line(Self.line(for: payload))
            }
        }
        if context.interruption.signal == nil, let endpoint = context.endpoint {
            throw CommandFailure.connectionLost(endpoint, reason: client.connectionState.description)
        }
    }

    /// `AA:BB:CC:DD:EE:01  value  2a19  57`.
    static func line(for event: DeviceEvent) -> String {
        var words = [event.address.string, event.kind.rawValue]
        if let characteristic = event.characteristic { words.append(characteristic.string) }
        if let value = event.value { words.append(ValueText.hex(value)) }
        return words.joined(separator: "  ")
    }
}
