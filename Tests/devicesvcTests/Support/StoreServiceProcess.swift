import Foundation
@preconcurrency import Glibc

@testable import ContextBusClient
@testable import ContextBusSupport
@testable import ContextBusWire

/// The real `storesvc` executable on `socketPath` with its database in `databasePath`, stopped by PID.
///
/// Restartable: `stop()` then `start(…)` with the same paths serves the same database again.
final class StoreServiceProcess: Sendable {
    let process: TestProcess
    let socketPath: String
    let databasePath: String

    private init(process: TestProcess, socketPath: String, databasePath: String) {
        self.process = process
        self.socketPath = socketPath
        self.databasePath = databasePath
    }

    /// The built executable, beside `devicesvc`.
    static var executablePath: String {
        URL(fileURLWithPath: DeviceServiceProcess.executablePath).deletingLastPathComponent()
            .appendingPathComponent("storesvc").path
    }

    /// Starts `storesvc` and waits until it answers `bus.hello` (a 60 s readiness guard).
    static func start(socketPath: String, databasePath: String) async throws -> StoreServiceProcess {
        let process = try TestProcess(
            executable: executablePath, arguments: ["--socket", socketPath, "--database", databasePath])
        let service = StoreServiceProcess(process: process, socketPath: socketPath, databasePath: databasePath)
        do {
            try await service.client("readiness").close()
        } catch {
            await offThePool { process.stop() }
            throw error
        }
        return service
    }

    /// A client of the service; retries (up to 60 s) while the service is starting.
    func client(_ name: String = "devicesvc-tests") async throws -> BusClient {
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            do {
                return try await BusClient.connect(to: socketPath, clientName: name)
            } catch {
                guard ContinuousClock.now < deadline else { throw error }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    /// The service's counters (`store.stats`).
    func stats() async throws -> StatsResult {
        let client = try await client("stats")
        defer { client.close() }
        return try await client.call(StoreStats.self)
    }

    /// The objects of `entity`, oldest first.
    func objects(of entity: String) async throws -> [StoreObject] {
        let client = try await client("fetch")
        defer { client.close() }
        let answer = try await client.call(method: StoreFetch.name, params: FetchParams(entity: entity).json)
        return try JSONFields(answer).objects("objects") { (object) throws(RPCError) in try StoreObject(fields: object)
        }
    }

    /// Kills the service with SIGKILL (no chance to flush or close anything) and reaps it.
    func crash() async {
        Glibc.kill(-process.pid, SIGKILL)
        await stop()
    }

    /// Stops the process (SIGTERM, then SIGKILL), off the cooperative pool.
    func stop() async {
        await offThePool { [process] in process.stop() }
    }
}
