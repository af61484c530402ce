import ContextBusWire
import Foundation

/// `ctxbus device scan [--seconds N] [--uuid UUID]… [--rssi DBM]`.
struct DeviceScanCommand: Command {
    static let configuration = CommandConfiguration(
        name: "scan", abstract: "Discover devices for a while and list what was heard.",
        discussion: """
            Sends device.scan. While it runs, a countdown is shown on standard error when that is a \
            terminal. With --json, the result as one JSON value ({"devices":[…]}).
            """,
        options: [
            .value("seconds", valueName: "s", help: "How long to scan (default 5)."),
            .repeating("uuid", valueName: "uuid", help: "Only devices advertising this service UUID (repeatable)."),
            .value("rssi", valueName: "dbm", help: "Only devices heard at this RSSI or stronger, e.g. -80."),
        ],
        service: .device, examples: ["ctxbus device scan --seconds 3", "ctxbus device scan --uuid 180f --rssi -80"])

    let params: ScanParams

    init(_ arguments: ParsedArguments) throws(UsageError) {
        var uuids: [BluetoothUUID] = []
        for text in arguments.values("uuid") {
            guard let uuid = BluetoothUUID(text) else {
                throw .invalidValue(text, for: "uuid", expected: "a 16-bit UUID like 180f or a 128-bit one")
            }
            uuids.append(uuid)
        }
        var rssi: Int?
        if let text = arguments.value("rssi") {
            guard let value = Int(text) else { throw .invalidValue(text, for: "rssi", expected: "an integer") }
            rssi = value
        }
        params = ScanParams(seconds: try arguments.number("seconds", above: 0) ?? 5, uuids: uuids, rssi: rssi)
    }

    func run(in context: CommandContext) async throws {
        let console = context.console
        let seconds = params.seconds
        let countdown = Task {
            let start = ContinuousClock.now
            while !Task.isCancelled {
                let left = max(0, seconds - (ContinuousClock.now - start) / .seconds(1))
                console.progress(String(format: "scanning: %.0f s left", left.rounded(.up)))
                try? await Task.sleep(for: .milliseconds(250))
            }
        }
        defer {
            countdown.cancel()
            console.progress(nil)
        }
        let result = try await context.withClient { try await $0.call(DeviceScan.self, params) }
        countdown.cancel()
        console.progress(nil)
        if console.isJSON { return console.json(result.json) }
        console.lines(DeviceCommands.table(for: result.devices).lines)
        console.line("(\(result.devices.count) devices heard in \(ValueText.text(.double(seconds))) s)")
    }
}
