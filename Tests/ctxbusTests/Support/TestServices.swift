import Foundation
@preconcurrency import Glibc
import TestSupport

@testable import ContextBusClient
@testable import ContextBusWire

/// A real `storesvc` on a temporary socket and database, stopped by PID.
final class TestStoreService: Sendable {
    let process: ChildProcess
    let directory: String
    var socketPath: String { directory + "/store.sock" }

    private init(process: ChildProcess, directory: String) {
        self.process = process
        self.directory = directory
    }

    /// Starts `storesvc` (on the socket and database in `directory`, a new one by default) and waits until it
    /// says hello (a readiness guard of 60 s).
    static func start(in existingDirectory: String? = nil, arguments: [String] = []) async throws -> TestStoreService {
        let directory = existingDirectory ?? makeTestDirectory(prefix: "ctxbus-store")
        let process = try ChildProcess(
            executable: productsDirectory + "/storesvc",
            arguments: ["--socket", directory + "/store.sock", "--database", directory + "/store.sqlite"] + arguments)
        let service = TestStoreService(process: process, directory: directory)
        do {
            let client = try await waitForHello(at: service.socketPath, process: process)
            client.close()
        } catch {
            service.stop()
            throw error
        }
        return service
    }

    /// A client of the service.
    func client(_ name: String = "ctxbus-tests") async throws -> BusClient {
        try await BusClient.connect(to: socketPath, clientName: name)
    }

    func stop() {
        process.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Stops the service and keeps its directory, for a restart on the same socket and database.
    func stopKeepingFiles() async {
        process.stop()
        _ = await process.waitForExit()
    }
}

/// Connects to `path` until a service answers `bus.hello` (60 s guard).
func waitForHello(at path: String, process: ChildProcess) async throws -> BusClient {
    let deadline = ContinuousClock.now + .seconds(60)
    while true {
        do {
            return try await BusClient.connect(to: path, clientName: "ctxbus-tests")
        } catch {
            guard ContinuousClock.now < deadline else {
                throw ChildProcessError.timedOut("a service at \(path)", output: "", errors: process.standardError)
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}

/// The simulated BlueZ of `scripts/bluez-sim --background` (docs/bluez-sim.md), stopped by PID.
final class TestBlueZSimulator: Sendable {
    /// Whether the machine can run it: dbus-daemon, python3, and Debian's python3-dbus and python3-gi.
    ///
    /// Checked by looking for the files rather than by running python: a Foundation `Process` waited for
    /// here would block whichever thread evaluates the trait.
    static let isSupported: Bool = {
        let files = FileManager.default
        return files.isExecutableFile(atPath: "/usr/bin/dbus-daemon")
            && files.isExecutableFile(atPath: "/usr/bin/python3")
            && files.fileExists(atPath: "/usr/lib/python3/dist-packages/dbus/__init__.py")
            && files.fileExists(atPath: "/usr/lib/python3/dist-packages/gi/__init__.py")
    }()

    let busAddress: String
    let pid: pid_t
    let directory: String

    private init(busAddress: String, pid: pid_t, directory: String) {
        self.busAddress = busAddress
        self.pid = pid
        self.directory = directory
    }

    /// Starts the simulator in the background and reads its address and PID.
    static func start() async throws -> TestBlueZSimulator {
        let directory = makeTestDirectory(prefix: "ctxbus-sim")
        let launcher = try ChildProcess(
            executable: repositoryRoot + "/scripts/bluez-sim",
            arguments: ["--background", "--ready-file", directory + "/ready", "--output", directory + "/sim.log"])
        defer { launcher.stop() }
        // The first run creates the simulator's venv, which may take minutes.
        try await launcher.waitUntil(seconds: 300, "the simulator's address") { output, _ in
            output.contains("BLUEZ_SIM_DIR=")
        }
        _ = await launcher.waitForExit()  // it exits by itself once the simulator is ready
        var values: [String: String] = [:]
        for line in launcher.standardOutput.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            values[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        guard let address = values["DBUS_SYSTEM_BUS_ADDRESS"], let pid = values["BLUEZ_SIM_PID"].flatMap(Int32.init)
        else { throw ChildProcessError.timedOut("the simulator's PID", output: launcher.standardOutput, errors: "") }
        return TestBlueZSimulator(busAddress: address, pid: pid, directory: directory)
    }

    func stop() {
        kill(pid, SIGTERM)
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// A real `devicesvc` on the simulator's bus, recording into `store`, stopped by PID.
final class TestDeviceService: Sendable {
    let process: ChildProcess
    let socketPath: String

    private init(process: ChildProcess, socketPath: String) {
        self.process = process
        self.socketPath = socketPath
    }

    /// Starts `devicesvc` and waits until BlueZ answers through it (60 s guard).
    static func start(bus: String, store: TestStoreService) async throws -> TestDeviceService {
        let socketPath = store.directory + "/device.sock"
        let process = try ChildProcess(
            executable: productsDirectory + "/devicesvc",
            arguments: ["--socket", socketPath, "--bus", bus, "--store", store.socketPath])
        let service = TestDeviceService(process: process, socketPath: socketPath)
        do {
            let client = try await waitForHello(at: socketPath, process: process)
            defer { client.close() }
            let deadline = ContinuousClock.now + .seconds(60)
            while true {
                do {
                    _ = try await client.call(DeviceAdapters.self)
                    break
                } catch let error as RPCError where error.code == .unavailable {
                    guard ContinuousClock.now < deadline else { throw error }
                    try await Task.sleep(for: .milliseconds(20))
                }
            }
        } catch {
            service.stop()
            throw error
        }
        return service
    }

    func stop() {
        process.stop()
    }
}
