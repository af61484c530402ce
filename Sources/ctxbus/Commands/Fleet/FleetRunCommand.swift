import ContextBusSupport
import ContextBusWire

/// `ctxbus fleet run GATEWAY ADDRESS STEP… [--id ID] [--record] [--timeout-ms MS] [--wait-ms MS] [--adapter NAME]`:
/// one chain on another gateway's devicesvc, sent through this gateway's fleetsvc (`fleet.run`, docs/fleet.md).
struct FleetRunCommand: Command {
    static let configuration = CommandConfiguration(
        name: "run", abstract: "Run a chain of Bluetooth LE steps on a device of another gateway of the fleet.",
        discussion: """
            Sends fleet.run to this gateway's fleetsvc, which queues the command for GATEWAY (its fleetsvc runs \
            it on its devicesvc, when started with --device) and waits for the outcome; prints each step's \
            result, then a summary. A command id names the command across the fleet: sending the same --id \
            again answers its first outcome and runs nothing ("repeated"). A gateway that does not answer within \
            --wait-ms fails with error 408, naming the id; the command stays queued for it. With --json, the \
            result as one JSON value ({"id","gateway","result","repeated"}). A failed chain exits 4.

            STEPS, as for `ctxbus device run`:
            \(ChainSyntax.help)
            """,
        arguments: [
            ArgumentSpec("gateway", help: "The gateway whose devicesvc runs the chain."),
            ArgumentSpec("address", help: "The device, e.g. AA:BB:CC:DD:EE:01."),
            ArgumentSpec("step", help: "The steps, in the syntax above.", isRepeating: true),
        ],
        options: [
            .value("id", valueName: "id", help: "The command id (1 to 128 letters, digits, '-', '_'; default: new)."),
            .flag("record", help: "Save the device state and the values read to that gateway's store."),
            .value("timeout-ms", valueName: "ms", help: "The whole chain's timeout (default: that devicesvc's)."),
            .value("wait-ms", valueName: "ms", help: "How long to wait for the outcome (default 30000)."),
            .value("adapter", valueName: "name", help: "The adapter there (default: that devicesvc's --adapter)."),
        ],
        service: .fleet,
        examples: [
            "ctxbus fleet run a AA:BB:CC:DD:EE:01 connect read:2a19 disconnect",
            "ctxbus fleet run a AA:BB:CC:DD:EE:01 connect write:2a06=01 disconnect --id alarm-7 --json",
        ])

    let params: FleetRunParams
    /// Each step in the compact syntax, normalised, for the printed lines.
    let stepTexts: [String]

    init(_ arguments: ParsedArguments) throws(UsageError) {
        guard let gateway = arguments.firstPositional("gateway") else { throw .missingArgument("gateway") }
        guard ReplicaParams.isValidGatewayName(gateway) else {
            throw UsageError("invalid gateway '\(gateway)': expected 1 to 64 letters, digits, '-' or '_'")
        }
        let address = try DeviceCommands.address(arguments.firstPositional("address"))
        let steps: [ChainStep]
        do {
            steps = try ChainSyntax.parse(arguments.positional("step"))
        } catch {
            throw error.usageError
        }
        let id = arguments.value("id")
        if let id, !FleetRunParams.isValidCommandID(id) {
            throw UsageError("invalid --id '\(id)': expected 1 to 128 letters, digits, '-' or '_'")
        }
        params = FleetRunParams(
            gateway: gateway,
            request: RunParams(
                address: address, steps: steps, timeoutMs: try arguments.integer("timeout-ms", atLeast: 1),
                record: arguments.flag("record"), adapter: arguments.value("adapter")),
            id: id, timeoutMs: try arguments.integer("wait-ms", atLeast: 1) ?? FleetRunParams.defaultTimeoutMs)
        stepTexts = steps.map(ChainSyntax.text(of:))
    }

    func run(in context: CommandContext) async throws {
        let console = context.console
        let answer: FleetRunResult
        do {
            answer = try await context.withClient { try await $0.call(FleetRun.self, params) }
        } catch let error as RPCError {
            throw DeviceRunCommand.failure(for: error, stepTexts: stepTexts)
        }
        if console.isJSON { return console.json(answer.json) }
        let width = stepTexts.map(\.count).max() ?? 0
        for result in answer.result.run.results where result.step >= 0 && result.step < stepTexts.count {
            var outcome = "ok"
            if let value = result.value {
                outcome = ValueText.hex(value)
                if let number = result.number { outcome += "  \(ValueText.number(number, unit: result.unit))" }
            } else if let values = result.values {
                outcome = values.map(ValueText.hex).joined(separator: " ")
            }
            console.line(
                "[\(result.step)] " + stepTexts[result.step].padding(toLength: width, withPad: " ", startingAt: 0)
                    + "  \(outcome)")
        }
        var summary =
            "command \(answer.id) on gateway \(answer.gateway): chain \(answer.result.run.chain) finished, "
            + "\(answer.result.run.results.count) steps on \(params.request.address)"
        if answer.isRepeated { summary += " (repeated: its first outcome; nothing ran now)" }
        console.line(summary)
    }
}
