import Foundation

extension DeviceBenchmark {
    /// The processes of the simulated BlueZ; every other process of a phase is the client's.
    static let stackProcesses = ["simulator", "dbus-daemon"]

    /// One measured phase: a client running `chains` chains on `devices` devices at once.
    struct Phase {
        /// `devicesvc`, `bleak`, `bleak, connect() locked` (an `asyncio.Lock` around `connect()`), or
        /// `raw dbus-fast`.
        let client: String
        let devices: Int
        let chains: Int
        let seconds: Double
        let latency: Summary
        /// CPU seconds each process spent during the phase.
        let cpuSeconds: [String: Double]

        var chainsPerSecond: Double { Double(chains) / seconds }

        /// Milliseconds of `process`'s CPU per chain.
        func cpuPerChain(_ process: String) -> Double { (cpuSeconds[process] ?? 0) * 1000 / Double(chains) }

        /// The client's processes (devicesvc and the bench's client; or bleak's or dbus-fast's Python).
        var clientProcesses: [String] { cpuSeconds.keys.filter { !stackProcesses.contains($0) }.sorted() }

        /// Milliseconds of CPU per chain over all the client's processes.
        var clientCPUPerChain: Double { clientProcesses.map(cpuPerChain).reduce(0, +) }

        /// `process`'s CPU time as a share of one core over the phase.
        func busy(_ process: String) -> Double { (cpuSeconds[process] ?? 0) / seconds }
    }

    /// Latency percentiles in milliseconds.
    struct Summary {
        let mean, p50, p90, p99, max: Double

        init(mean: Double, p50: Double, p90: Double, p99: Double, max: Double) {
            (self.mean, self.p50, self.p90, self.p99, self.max) = (mean, p50, p90, p99, max)
        }

        init(_ values: [Double]) {
            let sorted = values.sorted()
            func at(_ fraction: Double) -> Double {
                sorted[min(sorted.count - 1, Int((fraction * Double(sorted.count - 1)).rounded()))]
            }
            mean = values.reduce(0, +) / Double(Swift.max(values.count, 1))
            p50 = at(0.5)
            p90 = at(0.9)
            p99 = at(0.99)
            max = sorted.last ?? 0
        }
    }

    /// Prints the phases as a Markdown table, then the speed-ups and the devicesvc/bleak comparison.
    static func printReport(_ phases: [Phase], hop: Summary?, load: String, bleakRan: Bool) {
        let loadFigures = load.split(separator: " ").prefix(3).joined(separator: " ")
        print(
            "device: \(chains) chains per phase (connect, read 2a19, write with response, disconnect); "
                + "\(format(radioMilliseconds)) ms simulated radio per chain; load average at start \(loadFigures)")
        print(
            "| client | devices | chains/s | mean ms | p50 | p90 | p99 | overhead ms | client CPU ms/chain "
                + "| simulator CPU ms/chain | dbus-daemon CPU ms/chain | simulator busy | dbus-daemon busy |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for phase in phases {
            let parts = phase.clientProcesses.map { "\($0) \(format(phase.cpuPerChain($0)))" }
            let clientCPU =
                parts.count > 1
                ? "\(format(phase.clientCPUPerChain)) (\(parts.joined(separator: " + ")))"
                : format(phase.clientCPUPerChain)
            // Overhead only means something on one device: with several, a chain also waits for the adapter.
            let overhead = phase.devices == 1 ? format(phase.latency.mean - radioMilliseconds) : "-"
            let cells = [
                phase.client, "\(phase.devices)", format(phase.chainsPerSecond), format(phase.latency.mean),
                format(phase.latency.p50), format(phase.latency.p90), format(phase.latency.p99), overhead, clientCPU,
                format(phase.cpuPerChain("simulator")), format(phase.cpuPerChain("dbus-daemon")),
                percent(phase.busy("simulator")), percent(phase.busy("dbus-daemon")),
            ]
            print("| " + cells.joined(separator: " | ") + " |")
        }
        var speedUps: [String] = []
        for client in ["devicesvc", concurrentConnectsClient, "bleak", "bleak, connect() locked"] {
            guard
                let one = phases.first(where: { $0.client == client.prefix(while: { $0 != "," }) && $0.devices == 1 }),
                let many = phases.first(where: { $0.client == client && $0.devices > 1 })
            else { continue }
            speedUps.append(
                "\(client) \(format(many.chainsPerSecond / one.chainsPerSecond))x "
                    + "(\(format(one.chainsPerSecond)) → \(format(many.chainsPerSecond)) chains/s)")
        }
        print("speed-up with \(devices.count) devices: " + speedUps.joined(separator: ", "))
        guard bleakRan, let theirs = phases.first(where: { $0.client == "bleak" && $0.devices == 1 }) else {
            if !bleakRan { print("bleak: not run (scripts/bluez-sim --python failed)") }
            return
        }
        let floor = phases.first { $0.client == dbusFastClient }
        for ours in phases where ours.client.hasPrefix("devicesvc") && ours.devices == 1 {
            print("\(ours.client) on one device: " + comparison(ours, with: theirs, "bleak"))
            if let floor { print("\(ours.client) on one device: " + comparison(ours, with: floor, dbusFastClient)) }
        }
        if let floor { print("bleak on one device: " + comparison(theirs, with: floor, dbusFastClient)) }
        if let hop {
            print(
                "device.sock round trip (\(hopCalls) device.stats calls): mean \(format(hop.mean)) ms, "
                    + "p50 \(format(hop.p50)), p99 \(format(hop.p99))")
        }
        print("goal: devicesvc's overhead below 0.8x bleak's and at most 1.2x raw dbus-fast's")
    }

    /// `overhead X vs Y ms per chain (Zx), client CPU …` of `ours` against `theirs`.
    static func comparison(_ ours: Phase, with theirs: Phase, _ name: String) -> String {
        let ourOverhead = ours.latency.mean - radioMilliseconds
        let theirOverhead = theirs.latency.mean - radioMilliseconds
        return "vs \(name): overhead \(format(ourOverhead)) vs \(format(theirOverhead)) ms per chain "
            + "(\(format(ourOverhead / max(theirOverhead, 0.001)))x), client CPU "
            + "\(format(ours.clientCPUPerChain)) vs \(format(theirs.clientCPUPerChain)) ms per chain "
            + "(\(format(ours.clientCPUPerChain / max(theirs.clientCPUPerChain, 0.001)))x)"
    }

    static func format(_ value: Double) -> String { String(format: "%.2f", value) }

    static func percent(_ share: Double) -> String { String(format: "%.0f%%", share * 100) }
}
