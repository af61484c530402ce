import ContextBusWire
import Foundation

/// `ctxbus device discover [--seconds S] [--uuid UUID]… [--rssi DBM] [--duplicates] [--record] [--adapter NAME]`:
/// a `device.discover`, printing each advertisement until its seconds are up, Ctrl-C or SIGTERM.
struct DeviceDiscoverCommand: Command {
    static let configuration = CommandConfiguration(
        name: "discover", abstract: "Print advertisements as they are heard (BTHome values decoded).",
        discussion: """
            Sends device.discover and prints one line per device.advertisement: address, RSSI, name, \\
            manufacturer and service data, and the BTHome values decoded ('temperature 21.5 °C'). Without \\
            --duplicates a device is printed when first heard and whenever its data changes; with it, on \\
            every advertisement. --seconds 0 (the default) runs until Ctrl-C or SIGTERM (exit 0); otherwise \\
            it ends after the seconds and prints what it heard and skipped. With --json, each event's params \\
            as one JSON value per line.
            """,
        options: [
            .value("seconds", valueName: "s", help: "How long to discover (default 0: until Ctrl-C)."),
            .repeating("uuid", valueName: "uuid", help: "Only devices advertising this service or service data."),
            .value("rssi", valueName: "dbm", help: "Only devices heard at least this strong (default -90; -127: any)."),
            .flag("duplicates", help: "Print every advertisement, not only changed ones."),
            .flag("record", help: "Save the decoded values to the store (record: true)."),
            .value("adapter", valueName: "name", help: "The adapter (default: the service's)."),
        ],
        service: .device, streamsUntilInterrupted: true,
        examples: ["ctxbus device discover --uuid fcd2", "ctxbus device discover --seconds 10 --record --json"])

    let params: DiscoverParams

    init(_ arguments: ParsedArguments) throws(UsageError) {
        var uuids: [BluetoothUUID] = []
        for text in arguments.values("uuid") {
            guard let uuid = BluetoothUUID(text) else {
                throw .invalidValue(text, for: "uuid", expected: "a 16-bit UUID like fcd2 or a 128-bit one")
            }
            uuids.append(uuid)
        }
        var rssi = DiscoverParams.defaultRSSI
        if let text = arguments.value("rssi") {
            guard let value = Int(text) else { throw .invalidValue(text, for: "rssi", expected: "an integer") }
            rssi = value
        }
        let seconds = try arguments.number("seconds", above: -1) ?? 0
        params = DiscoverParams(
            seconds: seconds, uuids: uuids, rssi: rssi, duplicates: arguments.flag("duplicates"),
            record: arguments.flag("record"), adapter: arguments.value("adapter"))
    }

    func run(in context: CommandContext) async throws {
        let console = context.console
        let client = try await context.connect()
        defer { client.close() }
        let events = client.eventStream(method: nil)
        context.interruption.onInterrupt { _ in client.close() }
        let discovery = try await client.call(DeviceDiscover.self, params).discovery
        if !console.isJSON { console.note("discovery \(discovery); Ctrl-C stops") }
        for await event in events {
            if event.method == AdvertisementEvent.method {
                guard let advertisement = try? event.payload(as: AdvertisementEvent.self),
                    advertisement.discovery == discovery
                else { continue }
                if console.isJSON { console.json(event.params) } else { console.line(Self.line(for: advertisement)) }
            } else if event.method == DiscoveryEndedEvent.method,
                let ended = try? event.payload(as: DiscoveryEndedEvent.self), ended.discovery == discovery
            {
                if console.isJSON {
                    console.json(event.params)
                } else {
                    console.note(
                        "discovery \(discovery) ended: \(ended.advertisements) advertisements, \(ended.skipped) skipped"
                    )
                }
                if let error = ended.error { throw CommandFailure(.serviceError, ["the discovery failed: \(error)"]) }
                return
            }
        }
        if context.interruption.signal == nil, let endpoint = context.endpoint {
            throw CommandFailure.connectionLost(endpoint, reason: client.connectionState.description)
        }
    }

    /// `AA:BB:CC:DD:EE:05  -66 dBm  BTHome-5  fcd2=40000901…  battery 93 %, temperature 21.5 °C`.
    static func line(for event: AdvertisementEvent) -> String {
        var words = [event.address.string, "\(event.rssi) dBm"]
        if let name = event.name { words.append(name) }
        for (company, data) in event.manufacturerData.sorted(by: { $0.key < $1.key }) {
            words.append("\(company):\(ValueText.hex(data))")
        }
        for (uuid, data) in event.serviceData.sorted(by: { $0.key < $1.key }) {
            words.append(
                "\(DeviceCommands.shortForm(BluetoothUUID(uuid) ?? BluetoothUUID("0000")!))=\(ValueText.hex(data))")
        }
        if !event.decoded.isEmpty {
            words.append(
                event.decoded.map { "\($0.name) \(ValueText.number($0.number, unit: $0.unit))" }.joined(separator: ", ")
            )
        }
        return words.joined(separator: "  ")
    }
}
