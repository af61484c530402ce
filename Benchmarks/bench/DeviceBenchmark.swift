import ContextBusClient
import ContextBusSupport
import ContextBusWire
import Dispatch
import Foundation
@preconcurrency import Glibc

/// `bench device`: connect → read 2a19 → write (with response) → disconnect chains through the real `devicesvc`
/// against the simulated BlueZ, next to bleak (Python) doing the same against the same simulator afterwards.
///
/// Phases of 200 chains each: devicesvc on one device (sequential), devicesvc on four devices at once (50 each),
/// first with its default of one link set-up at a time on the adapter, then with `--concurrent-connects 4`;
/// with devicesvc stopped, bleak the same two ways and on four devices with its `connect()` serialised by hand, and
/// raw dbus-fast (bleak's D-Bus library: four method calls per chain, the floor of a library) on one device;
/// then devicesvc on one device again (the load of a shared machine drifts). Each phase reports chains/s, latency, the
/// overhead over the 25 ms the simulator spends "on the radio" (connect 10 + resolve 10 + disconnect 5 ms) and
/// the CPU time of every process involved (utime + stime from /proc/PID/stat): devicesvc and this process's
/// client, or bleak's Python process; the simulator's Python process and its dbus-daemon. The simulator's share
/// of one core shows whether it is the ceiling of the four-device phases.
enum DeviceBenchmark {
    static let chains = 200
    static let devices = ["AA:BB:CC:DD:EE:01", "AA:BB:CC:DD:EE:02", "AA:BB:CC:DD:EE:03", "AA:BB:CC:DD:EE:04"]
    /// Simulated radio time per chain with the simulator's default timings.
    static let radioMilliseconds = 25.0

    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path

    static func run() throws {
        let load = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "?"
        let simulator = try Simulator.start(options: ["--cached", "all"])
        defer { simulator.stop() }
        let stack = [("simulator", simulator.pid), ("dbus-daemon", simulator.daemonPID)]

        var hop: Summary?
        var phases = try withService(on: simulator, watching: stack) { client, cpu in
            let phases = [
                try measure("devicesvc", devices: 1, cpu: cpu) { try runChains(client, on: [devices[0]]) },
                try measure("devicesvc", devices: devices.count, cpu: cpu) { try runChains(client, on: devices) },
            ]
            hop = try measureHop(client)
            return phases
        }
        // Link set-ups overlapping, as bleak's do: the simulator's adapter takes several at once.
        phases += try withService(on: simulator, watching: stack, arguments: concurrentConnects) { client, cpu in
            [
                try measure(concurrentConnectsClient, devices: devices.count, cpu: cpu) {
                    try runChains(client, on: devices)
                }
            ]
        }
        // bleak runs alone: devicesvc would otherwise receive (and the bus route to it) bleak's signals too.
        let bleak = try runBleak(bus: simulator.busAddress, watching: stack)
        phases += bleak
        // The floor: the same chain with nothing but bleak's D-Bus library, alone too.
        phases += try runDBusFast(bus: simulator.busAddress, watching: stack)
        // devicesvc on one device once more, to show how far the machine's load moved the figures meanwhile.
        phases += try withService(on: simulator, watching: stack) { client, cpu in
            [try measure("devicesvc, again", devices: 1, cpu: cpu) { try runChains(client, on: [devices[0]]) }]
        }
        printReport(phases, hop: hop, load: load, bleakRan: !bleak.isEmpty)
    }

    /// Starts `devicesvc` on the simulator, connects a client, runs five warm-up chains, then `body` with a CPU
    /// watch over devicesvc, this process and `stack`; stops the service afterwards.
    static func withService(
        on simulator: Simulator, watching stack: [(name: String, pid: pid_t)], arguments: [String] = [],
        _ body: (BusClient, CPUWatch) throws -> [Phase]
    ) throws -> [Phase] {
        let socket = simulator.directory + "/device.sock"
        let service = try startService(bus: simulator.busAddress, socket: socket, arguments: arguments)
        defer { _ = service.terminate() }
        let client = try connect(to: socket)
        defer { client.close() }
        for _ in 0..<5 { try runChain(client, device: devices[0]) }
        return try body(client, CPUWatch([("devicesvc", service.pid), ("bench client", getpid())] + stack))
    }

    /// Runs `chains` chains split evenly over `devices`, one thread per device, and returns each chain's
    /// latency in milliseconds.
    ///
    /// A `Thread` per device, not `concurrentPerform`: that runs only as many iterations at once as there are
    /// cores (two here), which measured two devices at a time instead of four.
    static func runChains(_ client: BusClient, on devices: [String]) throws -> [Double] {
        let perDevice = chains / devices.count
        let latencies = Locked([Double]())
        let failures = Locked(0)
        let finished = DispatchGroup()
        for device in devices {
            finished.enter()
            Thread {
                defer { finished.leave() }
                for _ in 0..<perDevice {
                    let start = ContinuousClock.now
                    do {
                        try runChain(client, device: device)
                        let elapsed = (ContinuousClock.now - start).milliseconds
                        latencies.withLock { $0.append(elapsed) }
                    } catch {
                        failures.withLock { $0 += 1 }
                    }
                }
            }.start()
        }
        finished.wait()
        let failed = failures.withLock { $0 }
        guard failed == 0 else { throw BenchmarkError.chainsFailed(failed) }
        return latencies.withLock { $0 }
    }

    /// The round trip over `device.sock` alone: `hopCalls` `device.stats` calls one after the other (answered from
    /// devicesvc's counters, no BlueZ call), each one request and its answer — what a chain crosses that a library's
    /// chain does not.
    static func measureHop(_ client: BusClient) throws -> Summary {
        var latencies: [Double] = []
        for _ in 0..<hopCalls {
            let start = ContinuousClock.now
            _ = try client.callAndWait(DeviceStats.self, EmptyObject())
            latencies.append((ContinuousClock.now - start).milliseconds)
        }
        return Summary(latencies)
    }

    static let hopCalls = 200

    /// Times one phase and the CPU its processes spent.
    static func measure(
        _ client: String, devices: Int, cpu: CPUWatch, _ body: () throws -> [Double]
    ) throws -> Phase {
        let before = cpu.sample()
        let start = ContinuousClock.now
        let latencies = try body()
        let seconds = (ContinuousClock.now - start).milliseconds / 1000
        let after = cpu.sample()
        return Phase(
            client: client, devices: devices, chains: latencies.count, seconds: seconds, latency: Summary(latencies),
            cpuSeconds: after.merging(before) { $0 - $1 })
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

    /// devicesvc's flags for the phase whose link set-ups overlap, and the phase's name.
    static let concurrentConnects = ["--concurrent-connects", "\(devices.count)"]
    static let concurrentConnectsClient = "devicesvc, " + concurrentConnects.joined(separator: " ")

    static func startService(bus: String, socket: String, arguments: [String] = []) throws -> ChildProcess {
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
        return try ChildProcess(
            binary.path, ["--socket", socket, "--bus", bus, "--log-level", "warning"] + arguments)
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

    enum BenchmarkError: Error, CustomStringConvertible {
        case simulatorDidNotStart(String)
        case chainsFailed(Int)
        case unexpectedResult(String)
        case spawnFailed(String, Int32)

        var description: String {
            switch self {
            case .simulatorDidNotStart(let output): return "the simulator did not start: \(output)"
            case .chainsFailed(let count): return "\(count) chains failed"
            case .unexpectedResult(let json): return "unexpected chain result \(json)"
            case .spawnFailed(let executable, let code): return "cannot start \(executable): error \(code)"
            }
        }
    }

    /// `scripts/bluez-sim --background`, stopped by its PID.
    struct Simulator {
        let busAddress: String
        let pid: pid_t
        /// The simulator's private dbus-daemon.
        let daemonPID: pid_t
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
                let daemonPID = values["BLUEZ_SIM_DBUS_PID"].flatMap(Int32.init),
                let directory = values["BLUEZ_SIM_DIR"]
            else { throw BenchmarkError.simulatorDidNotStart(text) }
            return Simulator(busAddress: bus, pid: pid, daemonPID: daemonPID, directory: directory)
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
        _ = retryingInterrupts { waitpid(pid, &status, 0) }
        return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }

    /// Sends SIGTERM and waits.
    func terminate() -> Int32 {
        kill(pid, SIGTERM)
        return waitForExit()
    }
}
