import Foundation
@preconcurrency import Glibc

extension DeviceBenchmark {
    /// bleak's phases from `scripts/bluezsim/bleak_bench.py` (one device; all of `devices` at once; the same with
    /// an `asyncio.Lock` around `connect()`), against
    /// the same simulator devicesvc used, with the CPU time of `watching` per phase; empty if bleak did not run.
    ///
    /// The same simulator, not one of its own: the simulator's timers run late under load (10 ms came out as
    /// 14–18 ms here), and a simulator started elsewhere (another session, another moment) is slower or faster
    /// by more than the difference being measured.
    static func runBleak(bus: String, watching: [(name: String, pid: pid_t)]) throws -> [Phase] {
        let names = ["sequential": "bleak", "parallel": "bleak", "parallel_connect_locked": "bleak, connect() locked"]
        let phases = try runPython(
            "bleak_bench.py", ["--parallel-devices", String(devices.count)], bus: bus, watching: watching,
            clientName: "bleak")
        return ["sequential", "parallel", "parallel_connect_locked"].compactMap { name in
            phases[name].flatMap { phase($0, client: names[name]!, clientName: "bleak") }
        }
    }

    /// The name of raw dbus-fast's phase.
    static let dbusFastClient = "raw dbus-fast"

    /// The floor of a library: the same chain made with raw dbus-fast (`scripts/bluezsim/dbusfast_bench.py`, bleak's
    /// own D-Bus library, four method calls per chain and nothing else) on one device, against the same simulator;
    /// empty if it did not run.
    static func runDBusFast(bus: String, watching: [(name: String, pid: pid_t)]) throws -> [Phase] {
        let phases = try runPython("dbusfast_bench.py", [], bus: bus, watching: watching, clientName: "dbus-fast")
        return phases["sequential"].flatMap { phase($0, client: dbusFastClient, clientName: "dbus-fast") }.map {
            [$0]
        } ?? []
    }

    /// Runs one of the simulator venv's Python benchmarks with `chains` chains on the simulator at `bus`, and returns
    /// the phases of the JSON line it printed last (empty when it failed).
    private static func runPython(
        _ script: String, _ arguments: [String], bus: String, watching: [(name: String, pid: pid_t)],
        clientName: String
    ) throws -> [String: [String: Any]] {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent(
            "bench-\(clientName)-\(getpid()).out"
        ).path
        defer { try? FileManager.default.removeItem(atPath: output) }
        setenv("DBUS_SYSTEM_BUS_ADDRESS", bus, 1)
        let status = try ChildProcess.run(
            repositoryRoot + "/scripts/bluez-sim",
            ["--python", repositoryRoot + "/scripts/bluezsim/" + script, "--chains", String(chains), "--use-running"]
                + arguments + watching.flatMap { ["--watch", "\($0.name)=\($0.pid)"] },
            standardOutput: output)
        let data = (try? Data(contentsOf: URL(fileURLWithPath: output))) ?? Data()
        guard status == 0,
            let line = String(decoding: data, as: UTF8.self).split(separator: "\n").last(where: { $0.hasPrefix("{") }),
            let json = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let phases = json["phases"] as? [String: [String: Any]]
        else { return [:] }
        return phases
    }

    /// One phase of the Python benchmarks' JSON; their own process is reported as "client", shown as `clientName`.
    private static func phase(_ json: [String: Any], client: String, clientName: String) -> Phase? {
        guard let devices = json["devices"] as? Int, let chains = json["chains"] as? Int,
            let seconds = json["seconds"] as? Double, let ms = json["ms"] as? [String: Double],
            let mean = ms["mean"], let p50 = ms["p50"], let p90 = ms["p90"], let p99 = ms["p99"], let max = ms["max"],
            let cpu = json["cpu_s"] as? [String: Double]
        else { return nil }
        let named = Dictionary(uniqueKeysWithValues: cpu.map { ($0.key == "client" ? clientName : $0.key, $0.value) })
        return Phase(
            client: client, devices: devices, chains: chains, seconds: seconds,
            latency: Summary(mean: mean, p50: p50, p90: p90, p99: p99, max: max), cpuSeconds: named)
    }
}
