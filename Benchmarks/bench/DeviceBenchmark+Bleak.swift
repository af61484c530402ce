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
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("bench-bleak-\(getpid()).out").path
        defer { try? FileManager.default.removeItem(atPath: output) }
        setenv("DBUS_SYSTEM_BUS_ADDRESS", bus, 1)
        let status = try ChildProcess.run(
            repositoryRoot + "/scripts/bluez-sim",
            [
                "--python", repositoryRoot + "/scripts/bluezsim/bleak_bench.py", "--chains", String(chains),
                "--parallel-devices", String(devices.count), "--use-running",
            ] + watching.flatMap { ["--watch", "\($0.name)=\($0.pid)"] },
            standardOutput: output)
        let data = (try? Data(contentsOf: URL(fileURLWithPath: output))) ?? Data()
        guard status == 0,
            let line = String(decoding: data, as: UTF8.self).split(separator: "\n").last(where: { $0.hasPrefix("{") }),
            let json = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let phases = json["phases"] as? [String: Any]
        else { return [] }
        let names = ["sequential": "bleak", "parallel": "bleak", "parallel_connect_locked": "bleak, connect() locked"]
        return ["sequential", "parallel", "parallel_connect_locked"].compactMap { name in
            (phases[name] as? [String: Any]).flatMap { phase($0, client: names[name]!) }
        }
    }

    /// One phase of bleak_bench.py's JSON; its own process is reported as "client" and shown as "bleak".
    private static func phase(_ json: [String: Any], client: String) -> Phase? {
        guard let devices = json["devices"] as? Int, let chains = json["chains"] as? Int,
            let seconds = json["seconds"] as? Double, let ms = json["ms"] as? [String: Double],
            let mean = ms["mean"], let p50 = ms["p50"], let p90 = ms["p90"], let p99 = ms["p99"], let max = ms["max"],
            let cpu = json["cpu_s"] as? [String: Double]
        else { return nil }
        let named = Dictionary(uniqueKeysWithValues: cpu.map { ($0.key == "client" ? "bleak" : $0.key, $0.value) })
        return Phase(
            client: client, devices: devices, chains: chains, seconds: seconds,
            latency: Summary(mean: mean, p50: p50, p90: p90, p99: p99, max: max), cpuSeconds: named)
    }
}
