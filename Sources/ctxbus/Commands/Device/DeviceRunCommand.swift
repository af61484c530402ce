import ContextBusSupport
import ContextBusWire
import Foundation

/// `ctxbus device run ADDRESS STEP… [--record] [--timeout-ms MS]`: one chain, in the compact
/// syntax of `ChainSyntax`.
struct DeviceRunCommand: Command {
    static let configuration = CommandConfiguration(
        name: "run", abstract: "Run a chain of Bluetooth LE steps on one device.",
        discussion: """
            Sends device.run and prints each step as it finishes (device.step events), then a summary; \
            while it runs, the current step is shown on standard error when that is a terminal. With \
            --json, only the result as one JSON value ({"chain","results"[,"recorded"]}) or, when the chain \
            fails, {"error":{"code","message","data":{"chain","step","bluez"?,"results"}}}. A failed chain \
            exits 4. Ctrl-C ends ctxbus (exit 130), which cancels the chain (it still disconnects).

            STEPS (one word each; values in hex, UUIDs 16-bit like 2a19 or 128-bit):
            \(ChainSyntax.help)
            @MS is the step's timeout in milliseconds (default: the service's --step-timeout-ms).
            """,
        arguments: [
            ArgumentSpec("address", help: "The device, e.g. AA:BB:CC:DD:EE:01."),
            ArgumentSpec("step", help: "The steps, in the syntax above.", isRepeating: true),
        ],
        options: [
            .flag("record", help: "Save the device state and the values read to the store (record: true)."),
            .value("timeout-ms", valueName: "ms", help: "The whole chain's timeout (default: the service's)."),
            .value("adapter", valueName: "name", help: "The adapter (default: the service's --adapter)."),
        ],
        service: .device,
        examples: [
            "ctxbus device run AA:BB:CC:DD:EE:01 connect read:2a19 disconnect",
            "ctxbus device run AA:BB:CC:DD:EE:01 connect write:2a06=01 notify:2a19x3@5000 disconnect --record",
        ])

    let params: RunParams
    /// Each step in the compact syntax, normalised, for the printed lines.
    let stepTexts: [String]

    init(_ arguments: ParsedArguments) throws(UsageError) {
        let address = try DeviceCommands.address(arguments.firstPositional("address"))
        let steps: [ChainStep]
        do {
            steps = try ChainSyntax.parse(arguments.positional("step"))
        } catch {
            throw error.usageError
        }
        params = RunParams(
            address: address, steps: steps, timeoutMs: try arguments.integer("timeout-ms", atLeast: 1),
            record: arguments.flag("record"), adapter: arguments.value("adapter"))
        stepTexts = steps.map(ChainSyntax.text(of:))
    }

    func run(in context: CommandContext) async throws {
        let console = context.console
        let client = try await context.connect()
        defer { client.close() }
        let width = stepTexts.map(\.count).max() ?? 0
        let notifications = Locked([Int: Int]())
        showProgress(running: 0, console: console)
        // Printed on the client's loop as each event arrives, so every step line is out before the result.
        let observation = client.events(StepEvent.self).startWithValues { [stepTexts] event in
            guard event.step >= 0, event.step < stepTexts.count else { return }
            if !console.isJSON {
                let label =
                    "[\(event.step)] " + stepTexts[event.step].padding(toLength: width, withPad: " ", startingAt: 0)
                var outcome = "ok"
                if let value = event.value {
                    outcome = ValueText.hex(value)
                    if let number = event.number { outcome += "  \(ValueText.number(number, unit: event.unit))" }
                    if event.isNotification {
                        let n = notifications.withLock { counts in
                            counts[event.step, default: 0] += 1
                            return counts[event.step] ?? 0
                        }
                        outcome += "  (notification \(n))"
                    }
                }
                console.line("\(label)  \(outcome)")
            }
            // A notification leaves its step running; any other event ends it.
            showProgress(running: event.isNotification ? event.step : event.step + 1, console: console)
        }
        defer { observation.dispose() }
        let answer: RecordedRunResult
        do {
            answer = try await client.call(DeviceRecordedRun.self, params)
        } catch let error as RPCError {
            console.progress(nil)
            throw failure(for: error)
        }
        console.progress(nil)
        if console.isJSON {
            console.json(answer.json)
        } else {
            var summary = "chain \(answer.run.chain) finished: \(answer.run.results.count) steps on \(params.address)"
            if let recording = answer.recording, recording.error == nil { summary += ", recorded in the store" }
            console.line(summary)
        }
        if let error = answer.recording?.error {
            throw CommandFailure(.serviceError, ["the chain ran but was not recorded: \(error)"])
        }
    }

    /// The failure to report for an error answer: a failed chain (exit 4) names its step.
    private func failure(for error: RPCError) -> any Error { Self.failure(for: error, stepTexts: stepTexts) }

    /// The failure to report for an error answer to a chain of `stepTexts` (also `ctxbus fleet run`'s).
    static func failure(for error: RPCError, stepTexts: [String]) -> any Error {
        guard let chainFailure = error.chainFailure else { return error }
        let step = chainFailure.step
        let stepText = step >= 0 && step < stepTexts.count ? " (\(stepTexts[step]))" : ""
        var lines = [
            "chain \(chainFailure.chain) failed at step \(step)\(stepText): error \(error.code.rawValue): "
                + error.message
        ]
        if let bluez = chainFailure.bluez { lines.append("BlueZ error: \(bluez)") }
        lines.append("steps finished before it: \(chainFailure.results.count)")
        return CommandFailure(.chainFailed, lines, serviceError: error)
    }

    private func showProgress(running step: Int, console: Console) {
        guard step < stepTexts.count else { return console.progress(nil) }
        console.progress("chain on \(params.address): step \(step + 1)/\(stepTexts.count) \(stepTexts[step]) ...")
    }
}
