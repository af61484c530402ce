import Foundation
@preconcurrency import Glibc

@testable import ContextBusClient
@testable import ContextBusWire
@testable import devicesvc

/// The real `devicesvc` executable, run against a simulator, with a `BusClient` connected to it.
final class DeviceServiceProcess: Sendable {
    let process: TestProcess
    let socketPath: String
    let logPath: String
    let client: BusClient

    private init(process: TestProcess, socketPath: String, logPath: String, client: BusClient) {
        self.process = process
        self.socketPath = socketPath
        self.logPath = logPath
        self.client = client
    }

    /// The built executable, beside the test bundle.
    static var executablePath: String {
        let bundle = Bundle.main.bundleURL
        let directory = bundle.pathExtension == "xctest" ? bundle.deletingLastPathComponent() : bundle
        return directory.appendingPathComponent("devicesvc").path
    }

    /// Starts `devicesvc` on the simulator's bus, waits until it answers, and connects a client.
    ///
    /// - Parameters:
    ///   - arguments: extra flags.
    ///   - waitForBlueZ: also wait until `device.adapters` answers (BlueZ loaded).
    ///   - lifetimeSeconds: as `TestProcess`'s; `nil` to check the exit status.
    static func start(
        bus: String, in directory: String, arguments: [String] = [], waitForBlueZ: Bool = true,
        lifetimeSeconds: Int? = 300, environment: [String: String] = [:]
    ) async throws -> DeviceServiceProcess {
        let socketPath = directory + "/device.sock"
        let logPath = directory + "/devicesvc.log"
        let process = try TestProcess(
            executable: executablePath,
            arguments: [
                "--socket", socketPath, "--bus", bus, "--store", directory + "/store.sock", "--log-level", "debug",
            ]
                + arguments,
            lifetimeSeconds: lifetimeSeconds, standardErrorPath: logPath, environment: environment)
        do {
            let client = try await connect(to: socketPath)
            let service = DeviceServiceProcess(
                process: process, socketPath: socketPath, logPath: logPath, client: client)
            if waitForBlueZ { try await service.waitUntilBlueZIsAvailable() }
            return service
        } catch {
            process.stop()
            throw error
        }
    }

    private static func connect(to socketPath: String) async throws -> BusClient {
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            do {
                return try await BusClient.connect(to: socketPath, clientName: "devicesvc-tests")
            } catch {
                guard ContinuousClock.now < deadline else { throw error }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    /// Polls `device.adapters` until it answers something other than 503 (a readiness probe, not a timing check).
    func waitUntilBlueZIsAvailable() async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            do {
                _ = try await client.call(DeviceAdapters.self)
                return
            } catch let error as RPCError where error.code == .unavailable {
                guard ContinuousClock.now < deadline else { throw error }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    /// Runs a chain and returns its result or its error.
    func run(_ params: RunParams, on client: BusClient? = nil) async -> Result<RecordedRunResult, RPCError> {
        do {
            return .success(
                try await (client ?? self.client).call(DeviceRecordedRun.self, params, timeout: .seconds(60)))
        } catch let error as RPCError {
            return .failure(error)
        } catch {
            return .failure(RPCError.internalError("\(error)"))
        }
    }

    /// Another client of the same service.
    func makeClient(name: String) async throws -> BusClient {
        try await BusClient.connect(to: socketPath, clientName: name)
    }

    /// What the service logged (for failure messages).
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    func stop() {
        client.close()
        process.stop()
    }
}

/// A simulator and a `devicesvc` on it, for one test.
struct SimulatedStack: Sendable {
    let simulator: BlueZSimulator
    let service: DeviceServiceProcess

    var client: BusClient { service.client }
}

/// Runs `body` with a fresh simulator and service; stops both afterwards.
func withSimulatedStack(
    simulatorOptions: [String] = [], serviceArguments: [String] = [],
    _ body: (SimulatedStack) async throws -> Void
) async throws {
    let simulator = try await BlueZSimulator.start(simulatorOptions)
    let service: DeviceServiceProcess
    do {
        service = try await DeviceServiceProcess.start(
            bus: simulator.busAddress, in: simulator.directory, arguments: serviceArguments)
    } catch {
        await simulator.stop()
        throw error
    }
    do {
        try await body(SimulatedStack(simulator: simulator, service: service))
    } catch {
        print("devicesvc log:\n\(service.log)")
        await offThePool { service.stop() }
        await simulator.stop()
        throw error
    }
    await offThePool { service.stop() }
    await simulator.stop()
}
