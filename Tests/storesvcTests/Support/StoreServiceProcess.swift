import Foundation
@preconcurrency import Glibc

@testable import ContextBusClient
@testable import ContextBusWire

/// A real `storesvc` process on a temporary socket and database, for integration tests.
///
/// Started from the built product next to the test bundle; stopped by PID (`signal(_:)`,
/// `kill -9` via `signal(SIGKILL)`); its standard error goes to a file in the directory.
final class StoreServiceProcess: @unchecked Sendable {
    // @unchecked Sendable: `process` is a Foundation `Process`, whose methods used here
    // (`processIdentifier`, `waitUntilExit`, `terminationStatus`) are thread-safe.
    let directory: URL
    let socketPath: String
    let databasePath: String
    let process: Process
    let logURL: URL

    /// Starts `storesvc` with `arguments` added to `--socket`/`--database` in `directory`, and waits
    /// until it accepts connections (or exits).
    init(
        directory: URL, arguments: [String] = [], socketName: String = "store.sock", waitForSocket: Bool = true,
        environment: [String: String] = [:], databaseName: String = "store.sqlite"
    )
        throws
    {
        self.directory = directory
        socketPath = directory.appendingPathComponent(socketName).path
        databasePath = directory.appendingPathComponent(databaseName).path
        logURL = directory.appendingPathComponent("storesvc-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: logURL.path, contents: nil)
        process = Process()
        process.executableURL = productsDirectory().appendingPathComponent("storesvc")
        process.arguments = ["--socket", socketPath, "--database", databasePath] + arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.standardError = try FileHandle(forWritingTo: logURL)
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        if waitForSocket {
            let deadline = ContinuousClock.now + .seconds(30)
            while !RawBusConnection.canConnect(to: socketPath) {
                guard process.isRunning, ContinuousClock.now < deadline else {
                    throw StoreServiceProcessError.didNotStart(log: log)
                }
                Thread.sleep(forTimeInterval: 0.02)
            }
        }
    }

    /// Makes a temporary directory and starts a service in it.
    static func start(arguments: [String] = []) throws -> StoreServiceProcess {
        try StoreServiceProcess(directory: try makeTemporaryDirectory(), arguments: arguments)
    }

    var pid: Int32 { process.processIdentifier }

    /// Sends `signal` to the process.
    func signal(_ number: Int32) {
        kill(process.processIdentifier, number)
    }

    /// Waits for the process to end and returns its exit status (or 128 + signal).
    func waitForExit() -> Int32 {
        process.waitUntilExit()
        return process.terminationReason == .uncaughtSignal
            ? 128 + process.terminationStatus : process.terminationStatus
    }

    /// What the process wrote to standard error.
    var log: String { (try? String(contentsOf: logURL, encoding: .utf8)) ?? "" }

    /// A connected client that has completed `bus.hello`, reading results with the service's model.
    func client(_ name: String = "test") async throws -> BusClient {
        let client = try await BusClient.connect(to: socketPath, clientName: name)
        client.model = try await client.call(StoreModel.self).model
        return client
    }

    /// Stops the process (SIGKILL if it still runs) and removes the directory.
    ///
    /// The wait is bounded: Foundation's `Process` can miss a child's exit when many end at once (seen under ASan
    /// with ~50 services: the killed child stays a zombie and `waitUntilExit` spins forever, holding a thread of
    /// the cooperative pool). A child left so is reaped when the test process exits.
    func destroy() {
        if process.isRunning {
            signal(SIGKILL)
            let deadline = Date().addingTimeInterval(10)
            while process.isRunning && Date() < deadline { usleep(10_000) }
        }
        try? FileManager.default.removeItem(at: directory)
    }
}

enum StoreServiceProcessError: Error, CustomStringConvertible {
    case didNotStart(log: String)

    var description: String {
        switch self {
        case .didNotStart(let log): return "storesvc did not start: \(log)"
        }
    }
}
