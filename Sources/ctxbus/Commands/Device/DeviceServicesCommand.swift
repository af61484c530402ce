import ContextBusWire
import Foundation

/// `ctxbus device services ADDRESS [--adapter NAME]`: the device's GATT database as BlueZ resolved it.
struct DeviceServicesCommand: Command {
    static let configuration = CommandConfiguration(
        name: "services", abstract: "List a device's GATT services, characteristics and descriptors.",
        discussion: """
            Sends device.services: the database BlueZ resolved when the device was last connected (exit 1 \\
            with 503 when it never was). One line per service, indented lines for its characteristics \\
            (with their flags) and descriptors. With --json, the result ({"services":[…]}).
            """,
        arguments: [ArgumentSpec("address", help: "The device, e.g. AA:BB:CC:DD:EE:01.")],
        options: [.value("adapter", valueName: "name", help: "The adapter (default: the service's).")],
        service: .device, examples: ["ctxbus device services AA:BB:CC:DD:EE:01"])

    let params: ServicesParams

    init(_ arguments: ParsedArguments) throws(UsageError) {
        params = ServicesParams(
            address: try DeviceCommands.address(arguments.firstPositional("address")),
            adapter: arguments.value("adapter"))
    }

    func run(in context: CommandContext) async throws {
        let result = try await context.withClient { try await $0.call(DeviceServices.self, params) }
        if context.console.isJSON { return context.console.json(result.json) }
        var lines: [String] = []
        for service in result.services {
            lines.append("service \(DeviceCommands.shortForm(service.uuid))\(service.primary ? "" : " (secondary)")")
            for characteristic in service.characteristics {
                lines.append(
                    "  characteristic \(DeviceCommands.shortForm(characteristic.uuid))  "
                        + characteristic.flags.joined(separator: ","))
                for descriptor in characteristic.descriptors {
                    lines.append("    descriptor \(DeviceCommands.shortForm(descriptor))")
                }
            }
        }
        context.console.lines(lines)
    }
}
