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
