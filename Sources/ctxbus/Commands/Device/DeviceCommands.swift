import ContextBusWire
import Foundation

/// `ctxbus device …`: the device service's methods.
enum DeviceCommands {
    static let group = CommandGroup(
        name: "device",
        abstract:
            "Bluetooth LE through the device service (devicesvc): adapters, devices, scans, chains, watches, discovery.",
        commands: [
            DeviceAdaptersCommand.self, DeviceListCommand.self, DeviceScanCommand.self, DeviceRunCommand.self,
            DeviceWatchCommand.self, DeviceDiscoverCommand.self, DeviceServicesCommand.self, DeviceEventsCommand.self,
            DeviceCancelCommand.self, DeviceStatsCommand.self,
        ])

    /// The table of `device.list` and `device.scan` results.
    static func table(for devices: [DeviceInfo]) -> Table {
        Table(
            ["address", "name", "rssi", "connected", "paired", "services"],
            rows: devices.map { device in
                [
                    device.address.string, device.name ?? "-", device.rssi.map(String.init) ?? "-",
                    device.connected ? "yes" : "no", device.paired ? "yes" : "no",
                    device.services.isEmpty ? "-" : device.services.map(shortForm).joined(separator: ","),
                ]
            })
    }

    /// `180f` for a UUID built on the Bluetooth base UUID, else the full form.
    static func shortForm(_ uuid: BluetoothUUID) -> String {
        let canonical = uuid.canonical
        let base = "-0000-1000-8000-00805f9b34fb"
        guard canonical.hasPrefix("0000"), canonical.hasSuffix(base), canonical.count == 36 else { return uuid.string }
        return String(canonical.dropFirst(4).prefix(4))
    }

    /// Reads an address argument.
    static func address(_ text: String?) throws(UsageError) -> BluetoothAddress {
        guard let text else { throw .missingArgument("address") }
        guard let address = BluetoothAddress(text) else {
            throw UsageError("invalid address '\(text)': expected six hex pairs like AA:BB:CC:DD:EE:01")
        }
        return address
    }
}

/// `ctxbus device adapters`.
struct DeviceAdaptersCommand: Command {
    static let configuration = CommandConfiguration(
        name: "adapters", abstract: "List the Bluetooth adapters BlueZ knows.", service: .device,
        examples: ["ctxbus device adapters"])

    init(_ arguments: ParsedArguments) throws(UsageError) {}

    func run(in context: CommandContext) async throws {
        let result = try await context.withClient { try await $0.call(DeviceAdapters.self) }
        if context.console.isJSON { return context.console.json(result.json) }
        context.console.lines(
            Table(
                ["name", "address", "powered"],
                rows: result.adapters.map { [$0.name, $0.address.string, $0.powered ? "yes" : "no"] }
            ).lines)
    }
}

/// `ctxbus device list [--adapter NAME]`.
struct DeviceListCommand: Command {
    static let configuration = CommandConfiguration(
        name: "list", abstract: "List the devices BlueZ knows (without scanning).",
        options: [.value("adapter", valueName: "name", help: "Only this adapter's devices (e.g. hci0).")],
        service: .device, examples: ["ctxbus device list", "ctxbus device list --adapter hci0 --json"])

    let params: ListParams

    init(_ arguments: ParsedArguments) throws(UsageError) {
        params = ListParams(adapter: arguments.value("adapter"))
    }

    func run(in context: CommandContext) async throws {
        let result = try await context.withClient { try await $0.call(DeviceList.self, params) }
        if context.console.isJSON { return context.console.json(result.json) }
        context.console.lines(DeviceCommands.table(for: result.devices).lines)
    }
}

/// `ctxbus device cancel CHAIN`.
struct DeviceCancelCommand: Command {
    static let configuration = CommandConfiguration(
        name: "cancel", abstract: "Cancel a running or queued chain.",
        discussion: """
            Sends device.cancel. The chain's device.run answers 499; a chain that had connected still \
            disconnects. The chain id is printed by 'ctxbus device run' and sent in every device.step event.
            """,
        arguments: [ArgumentSpec("chain", help: "The chain id, e.g. c-17.")], service: .device,
        examples: ["ctxbus device cancel c-17"])

    let chain: String

    init(_ arguments: ParsedArguments) throws(UsageError) {
        guard let chain = arguments.firstPositional("chain") else { throw .missingArgument("chain") }
        self.chain = chain
    }

    func run(in context: CommandContext) async throws {
        let result = try await context.withClient { try await $0.call(DeviceCancel.self, ChainReference(chain: chain)) }
        if context.console.isJSON { return context.console.json(result.json) }
        context.console.line("cancelled \(chain)")
    }
}
