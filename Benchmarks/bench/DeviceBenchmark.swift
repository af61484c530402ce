import BusProtocol
import Dispatch
import Foundation
@preconcurrency import Glibc
import Shared

/// `bench device`: connect → read 2a19 → write (with response) → disconnect chains through the real `devicesvc`
/// against the simulated BlueZ, next to bleak (Python) doing the same against the same simulator afterwards.
///
/// Reports chains/s and per-chain latency for 200 sequential chains, the per-chain overhead over the 25 ms the
/// simulator spends "on the radio" (connect 10 + resolve 10 + disconnect 5 ms), and the speed-up with four devices
/// in parallel (connection set-up stays serialised per adapter, so the speed-up is bounded by it).
enum DeviceBenchmark {
    static let chains = 200
    static let devices = ["AA:BB:CC:DD:EE:01", "AA:BB:CC:DD:EE:02", "AA:BB:CC:DD:EE:03", "AA:BB:CC:DD:EE:04"]
    /// Simulated radio time per chain with the simulator's default timings.
    static let radioMilliseconds = 25.0

    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path

    static func run() throws {
        let simulator = try Simulator.start(options: ["--cached", "all"])
        defer { simulator.stop() }
        let directory = simulator.directory
        let service = try startService(bus: simulator.busAddress, socket: directory + "/device.sock")
        defer { _ = service.terminate() }
        let client = try connect(to: directory + "/device.sock")
        defer { client.close() }

        for _ in 0..<5 { try runChain(client, device: devices[0]) }  // warm-up
        var latencies: [Double] = []
        let sequentialStart = ContinuousClock.now
        for _ in 0..<chains {
            let start = ContinuousClock.now
            try runChain(client, device: devices[0])
            latencies.append((ContinuousClock.now - start).milliseconds)
        }
        let sequentialSeconds = (ContinuousClock.now - sequentialStart).milliseconds / 1000
        let sequentialRate = Double(chains) / sequentialSeconds

        let perDevice = chains / devices.count
        let failures = Locked(0)
        let parallelStart = ContinuousClock.now
        DispatchQueue.concurrentPerform(iterations: devices.count) { index in
            for _ in 0..<perDevice {
                do { try runChain(client, device: devices[index]) } catch { failures.withLock { $0 += 1 } }
            }
        }
        let parallelSeconds = (ContinuousClock.now - parallelStart).milliseconds / 1000
        let parallelRate = Double(perDevice * devices.count) / parallelSeconds
        guard failures.withLock({ $0 }) == 0 else { throw BenchmarkError.chainsFailed(failures.withLock { $0 }) }

        let summary = Summary(latencies)
        print("device: \(chains) sequential chains (connect, read 2a19, write with response, disconnect) via devicesvc")
        print(
            "  devicesvc        \(format(sequentialRate)) chains/s; per chain ms: mean \(format(summary.mean)), "
                + "p50 \(format(summary.p50)), p90 \(format(summary.p90)), p99 \(format(summary.p99)), "
                + "max \(format(summary.max)); overhead over \(format(radioMilliseconds)) ms radio: "
                + "\(format(summary.mean - radioMilliseconds)) ms")
        print(
            "  devicesvc x4     \(format(parallelRate)) chains/s with \(devices.count) devices in parallel "
                + "(\(perDevice) chains each): speed-up \(format(parallelRate / sequentialRate))x")
        if let bleak = try runBleak(bus: simulator.busAddress) {
            print(
                "  bleak            \(format(bleak.rate)) chains/s; per chain ms: mean \(format(bleak.mean)), "
                    + "p50 \(format(bleak.p50)), p90 \(format(bleak.p90)), p99 \(format(bleak.p99)); overhead: "
                    + "\(format(bleak.mean - radioMilliseconds)) ms")
            let ours = summary.mean - radioMilliseconds
            let theirs = bleak.mean - radioMilliseconds
            print(
                "  devicesvc/bleak  \(format(sequentialRate / bleak.rate))x the chains/s; per-chain overhead "
                    + "\(format(ours)) vs \(format(theirs)) ms (\(format(ours / max(theirs, 0.001)))x)")
        } else {
            print("  bleak            not run (scripts/bluez-sim --python failed)")
        }
    }

    // MARK: - Chains

    static func runChain(_ client: BusClient, device: String) throws {
        let params = RunParams(
            address: BluetoothAddress(device)!,
            steps: [
                .connect(timeoutMs: nil), .read(characteristic: BluetoothUUID("2a19")!, timeoutMs: nil),
                .write(
                    characteristic: BluetoothUUID("c0defeed-0001-4000-8000-000000000000")!, value: Data([1]),
                    response: true, timeoutMs: nil),
                .disconnect,
            ])
        let result = try client.callAndWait(DeviceRun.self, params, timeout: .seconds(30))
        guard result.results.count == 4, result.results[1].value?.count == 1 else {
            throw BenchmarkError.unexpectedResult("\(result.json)")
        }
    }

    // MARK: - Processes

    static func startService(bus: String, socket: String) throws -> ChildProcess {
        let binaryDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let binary = binaryDirectory.appendingPathComponent("devicesvc")
        if !FileManager.default.isExecutableFile(atPath: binary.path) {
            let configuration = binaryDirectory.lastPathComponent == "debug" ? "debug" : "release"
            print("device: building devicesvc (\(configuration))")
            _ = try ChildProcess.run(
                "/usr/bin/env",
                [
                    "swift", "build", "--package-path", repositoryRoot, "-c", configuration, "--product", "devicesvc",
                    "-q",
                ])
        }
        return try ChildProcess(binary.path, ["--socket", socket, "--bus", bus, "--log-level", "warning"])
    }

    static func connect(to socket: String) throws -> BusClient {
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            do {
                let client = try blocking { try await BusClient.connect(to: socket, clientName: "bench") }
                // Wait until the service has BlueZ's tree.
                while true {
                    do {
                        _ = try client.callAndWait(DeviceAdapters.self, EmptyObject())
                        return client
                    } catch let error as RPCError where error.code == .unavailable {
                        guard ContinuousClock.now < deadline else { throw error }
                        usleep(20_000)
                    }
                }
            } catch let error as BusClientError {
                guard ContinuousClock.now < deadline else { throw error }
                usleep(20_000)
            }
        }
    }

    /// bleak's figures from `scripts/bluezsim/bleak_bench.py`, against the same simulator devicesvc used.
    ///
    /// The same simulator, not one of its own: the simulator's timers run late under load (10 ms came out as
    /// 14–18 ms here), and a simulator started elsewhere (another session, another moment) is slower or faster
    /// by more than the difference being measured.
    static func runBleak(bus: String) throws -> (rate: Double, mean: Double, p50: Double, p90: Double, p99: Double)? {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("bench-bleak-\(getpid()).out").path
        defer { try? FileManager.default.removeItem(atPath: output) }
        setenv("DBUS_SYSTEM_BUS_ADDRESS", bus, 1)
        let status = try ChildProcess.run(
            repositoryRoot + "/scripts/bluez-sim",
            [
                "--python", repositoryRoot + "/scripts/bluezsim/bleak_bench.py", "--chains", String(chains),
                "--use-running",
            ],
            standardOutput: output)
        let data = (try? Data(contentsOf: URL(fileURLWithPath: output))) ?? Data()
        guard status == 0,
            let line = String(decoding: data, as: UTF8.self).split(separator: "\n").last(where: { $0.hasPrefix("{") }),
            let json = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let rate = json["chains_per_s"] as? Double, let ms = json["ms"] as? [String: Double],
            let mean = ms["mean"], let p50 = ms["p50"], let p90 = ms["p90"], let p99 = ms["p99"]
        else { return nil }
        return (rate, mean, p50, p90, p99)
    }

    // MARK: - Helpers

    static func blocking<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) throws -> T {
        let result = Locked<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let outcome: Result<T, any Error>
            do { outcome = .success(try await work()) } catch { outcome = .failure(error) }
            result.withLock { $0 = outcome }
            done.signal()
        }
        done.wait()
        return try result.withLock { $0 }!.get()
    }

    static func format(_ value: Double) -> String { String(format: "%.2f", value) }

    struct Summary {
        let mean, p50, p90, p99, max: Double

        init(_ values: [Double]) {
            let sorted = values.sorted()
            func at(_ fraction: Double) -> Double {
                sorted[min(sorted.count - 1, Int((fraction * Double(sorted.count - 1)).rounded()))]
            }
            mean = values.reduce(0, +) / Double(values.count)
            p50 = at(0.5)
            p90 = at(0.9)
            p99 = at(0.99)
            max = sorted.last ?? 0
        }
    }

    enum BenchmarkError: Error, CustomStringConvertible {
        case simulatorDidNotStart(String)
        case chainsFailed(Int)
        case unexpectedResult(String)
        case spawnFailed(String, Int32)

        var description: String {
            switch self {
            case .simulatorDidNotStart(let output): return "the simulator did not start: \(output)"
            case .chainsFailed(let count): return "\(count) parallel chains failed"
            case .unexpectedResult(let json): return "unexpected chain result \(json)"
            case .spawnFailed(let executable, let code): return "cannot start \(executable): error \(code)"
            }
        }
    }

    /// `scripts/bluez-sim --background`, stopped by its PID.
    struct Simulator {
        let busAddress: String
        let pid: pid_t
        let directory: String

        static func start(options: [String]) throws -> Simulator {
            // The ready file, not a pipe: the detached simulator could keep a pipe's write end open.
            let ready = FileManager.default.temporaryDirectory.appendingPathComponent("bench-sim-\(getpid()).ready")
                .path
            let status = try ChildProcess.run(
                repositoryRoot + "/scripts/bluez-sim", ["--background", "--ready-file", ready] + options)
            let text = (try? String(contentsOfFile: ready, encoding: .utf8)) ?? "exit status \(status)"
            var values: [String: String] = [:]
            for line in text.split(separator: "\n") {
                guard let equals = line.firstIndex(of: "=") else { continue }
                values[String(line[..<equals])] = String(line[line.index(after: equals)...])
            }
            guard let bus = values["DBUS_SYSTEM_BUS_ADDRESS"], let pid = values["BLUEZ_SIM_PID"].flatMap(Int32.init),
                let directory = values["BLUEZ_SIM_DIR"]
            else { throw BenchmarkError.simulatorDidNotStart(text) }
            return Simulator(busAddress: bus, pid: pid, directory: directory)
        }

        func stop() {
            kill(pid, SIGTERM)
            for _ in 0..<500 where kill(pid, 0) == 0 { usleep(10_000) }
        }
    }
}

extension Duration {
    /// The duration in milliseconds, as a `Double`.
    fileprivate var milliseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }
}

/// A child process started with `posix_spawn` (Foundation's `Process` did not notice its children exiting here).
struct ChildProcess {
    let pid: pid_t

    /// Starts `executable` with `arguments`, standard output to a file (default: discarded).
    init(_ executable: String, _ arguments: [String], standardOutput: String? = nil) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(
            &actions, 1, standardOutput ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = [executable] + arguments
        var cArguments = argv.map { strdup($0) } + [nil]
        defer { for argument in cArguments { free(argument) } }
        var child: pid_t = 0
        let result = posix_spawn(&child, executable, &actions, nil, &cArguments, environ)
        guard result == 0 else { throw DeviceBenchmark.BenchmarkError.spawnFailed(executable, result) }
        pid = child
    }

    /// Runs a command to its end and returns its exit status.
    static func run(
        _ executable: String, _ arguments: [String], standardOutput: String? = nil
    ) throws -> Int32 {
        try ChildProcess(executable, arguments, standardOutput: standardOutput).waitForExit()
    }

    /// Waits for the process and returns its exit status (128 + signal when a signal ended it).
    func waitForExit() -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }

    /// Sends SIGTERM and waits.
    func terminate() -> Int32 {
        kill(pid, SIGTERM)
        return waitForExit()
    }
}
