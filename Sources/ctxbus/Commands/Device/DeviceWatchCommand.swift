import ContextBusWire
import Foundation

/// `ctxbus device watch ADDRESS UUID… [--record] [--min-ms MS] [--max-ms MS] [--adapter NAME]`: a `device.watch`,
/// printing its values and link changes until Ctrl-C or SIGTERM (exit 0).
struct DeviceWatchCommand: Command {
    static let configuration = CommandConfiguration(
        name: "watch", abstract: "Keep a device connected and print its notifications until Ctrl-C.",
        discussion: """
            Sends device.watch: devicesvc keeps the device connected with notifications on for the \\
            characteristics, reconnecting after every loss (the first attempt after about --min-ms, then \\
            doubling up to --max-ms), and ctxbus prints one line per value (decoded when the format is \\
            known: 'battery 87 %') and per link change. With --json, each device.value and device.link \\
            event's params as one JSON value per line. Ctrl-C or SIGTERM ends the watch (the device is \\
            disconnected unless another watch holds it) with exit status 0.
            """,
        arguments: [
            ArgumentSpec("address", help: "The device, e.g. AA:BB:CC:DD:EE:01."),
            ArgumentSpec(
                "characteristic", help: "Characteristics to get notifications of, e.g. 2a37.", isRepeating: true),
        ],
        options: [
            .flag("record", help: "Save every value to the store (record: true)."),
            .value("min-ms", valueName: "ms", help: "The first reconnect attempt's delay (default 500)."),
            .value("max-ms", valueName: "ms", help: "The longest delay between reconnect attempts (default 30000)."),
            .value("adapter", valueName: "name", help: "The adapter (default: the service's)."),
        ],
        service: .device, streamsUntilInterrupted: true,
        examples: [
            "ctxbus device watch AA:BB:CC:DD:EE:03 2a37",
            "ctxbus device watch AA:BB:CC:DD:EE:01 2a19 2a6e --record --min-ms 200 --json",
        ])

    let params: WatchParams

    init(_ arguments: ParsedArguments) throws(UsageError) {
        let address = try DeviceCommands.address(arguments.firstPositional("address"))
        let texts = arguments.positional("characteristic")
        guard !texts.isEmpty else { throw .missingArgument("characteristic") }
        var uuids: [BluetoothUUID] = []
        for text in texts {
            guard let uuid = BluetoothUUID(text) else {
                throw UsageError("invalid characteristic '\(text)': expected a 16-bit UUID like 2a37 or a 128-bit one")
            }
            uuids.append(uuid)
        }
        let minMs = try arguments.integer("min-ms", atLeast: 1) ?? ReconnectPolicy.standard.minMs
        let maxMs = try arguments.integer("max-ms", atLeast: 1) ?? max(ReconnectPolicy.standard.maxMs, minMs)
        guard maxMs >= minMs else { throw UsageError("--max-ms (\(maxMs)) must be at least --min-ms (\(minMs))") }
        params = WatchParams(
            address: address, notify: uuids, record: arguments.flag("record"),
            reconnect: ReconnectPolicy(minMs: minMs, maxMs: maxMs), adapter: arguments.value("adapter"))
    }

    func run(in context: CommandContext) async throws {
        let console = context.console
        let client = try await context.connect()
        defer { client.close() }
        let values = client.eventStream(method: nil)
        context.interruption.onInterrupt { _ in client.close() }
        let watch = try await client.call(DeviceWatch.self, params).watch
        if !console.isJSON {
            console.note(
                "watch \(watch): \(params.address) \(params.notify.map(\.string).joined(separator: " ")); Ctrl-C stops")
        }
        for await event in values {
            guard event.method == DeviceValueEvent.method || event.method == DeviceLinkEvent.method else { continue }
            if console.isJSON {
                console.json(event.params)
            } else if let value = try? event.payload(as: DeviceValueEvent.self), value.watch == watch {
                console.line(Self.line(for: value))
            } else if let link = try? event.payload(as: DeviceLinkEvent.self), link.watch == watch {
                console.line(Self.line(for: link))
            }
        }
        if context.interruption.signal == nil, let endpoint = context.endpoint {
            throw CommandFailure.connectionLost(endpoint, reason: client.connectionState.description)
        }
    }

    /// `AA:BB:CC:DD:EE:01  2a19  57  87 %`.
    static func line(for event: DeviceValueEvent) -> String {
        var words = [event.address.string, event.characteristic.string, ValueText.hex(event.value)]
        if let number = event.number { words.append(ValueText.number(number, unit: event.unit)) }
        return words.joined(separator: "  ")
    }

    /// `AA:BB:CC:DD:EE:01  reconnecting (attempt 2): …`.
    static func line(for event: DeviceLinkEvent) -> String {
        var text = "\(event.address)  \(event.state.rawValue)"
        if let attempt = event.attempt { text += " (attempt \(attempt))" }
        if let error = event.error { text += ": \(error)" }
        return text
    }
}
