import ContextBusClient
import Foundation
@preconcurrency import Glibc
import TestSupport

@testable import ContextBusSupport
@testable import fleetsvc

/// Whether `nats-server` is installed (scripts/setup installs it); the fleet tests skip with a message where not.
let natsServerPath: String? = ["/usr/sbin/nats-server", "/usr/bin/nats-server", "/usr/local/bin/nats-server"].first {
    FileManager.default.isExecutableFile(atPath: $0)
}

/// A free TCP port on 127.0.0.1 (bound, read, closed).
func freePort() -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
    }
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// A real `nats-server -js` on 127.0.0.1, its store in a temporary directory, stopped by PID.
final class TestNATSServer: Sendable {
    let port: Int
    let directory: String
    let process: Locked<ChildProcess?>
    var url: String { "nats://127.0.0.1:\(port)" }

    private init(port: Int, directory: String, process: ChildProcess?) {
        self.port = port
        self.directory = directory
        self.process = Locked(process)
    }

    static func start() async throws -> TestNATSServer {
        let directory = makeTestDirectory(prefix: "fleet-nats")
        let port = freePort()
        let server = TestNATSServer(port: port, directory: directory, process: try launch(port: port, in: directory))
        try await server.waitUntilReady()
        return server
    }

    /// A server whose port and directory are chosen but which is not running yet (`restart` starts it).
    static func notStarted() -> TestNATSServer {
        TestNATSServer(port: freePort(), directory: makeTestDirectory(prefix: "fleet-nats"), process: nil)
    }

    /// A server on `configuration` (a nats-server configuration file's text, whose JetStream `store_dir` is set
    /// to the server's directory), with `environment` (the variables the configuration names).
    static func start(configuration: String, environment: [String: String]) async throws -> TestNATSServer {
        let directory = makeTestDirectory(prefix: "fleet-nats")
        let port = freePort()
        let file = directory + "/nats.conf"
        try configuration.write(toFile: file, atomically: true, encoding: .utf8)
        let process = try ChildProcess(
            executable: natsServerPath!, arguments: ["-c", file, "-a", "127.0.0.1", "-p", String(port)],
            environment: environment)
        let server = TestNATSServer(port: port, directory: directory, process: process)
        try await server.waitUntilReady()
        return server
    }

    private static func launch(port: Int, in directory: String) throws -> ChildProcess {
        try ChildProcess(
            executable: natsServerPath!, arguments: ["-js", "-a", "127.0.0.1", "-p", String(port), "-sd", directory])
    }

    /// What the server logged so far.
    var log: String { process.withLock { $0 }?.standardError ?? "" }

    private func waitUntilReady() async throws {
        try await process.withLock { $0 }!.waitUntil(seconds: 30, "nats-server to listen") { _, errors in
            errors.contains("Server is ready")
        }
    }

    /// Stops the server (SIGTERM, as an operator would) and waits for it to exit; its data stays.
    func stopKeepingData() async {
        guard let running = process.withLock({ $0 }) else { return }
        running.send(signal: SIGTERM)
        _ = await running.waitForExit()
        process.withLock { $0 = nil }
    }

    /// Kills the server (`kill -9`) and waits for it; its data stays.
    func kill() async {
        guard let running = process.withLock({ $0 }) else { return }
        running.send(signal: SIGKILL)
        _ = await running.waitForExit()
        process.withLock { $0 = nil }
    }

    /// Starts it again on the same port and data directory.
    func restart() async throws {
        let started = try Self.launch(port: port, in: directory)
        process.withLock { $0 = started }
        try await waitUntilReady()
    }

    func stop() {
        process.withLock { $0 }?.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// One gateway: a real storesvc and fleetsvc on sockets and a database in a temporary directory.
final class TestGateway: Sendable {
    let name: String
    let directory: String
    let natsURL: String
    /// Flags storesvc gets besides its socket and database (the power-cut tests' simulated disk).
    let storeArguments: [String]
    private let storeProcess: Locked<ChildProcess?> = Locked(nil)
    private let fleetProcess: Locked<ChildProcess?> = Locked(nil)
    private let deviceProcess: Locked<ChildProcess?> = Locked(nil)
    let client: Locked<BusClient?> = Locked(nil)

    var storeSocket: String { directory + "/store.sock" }
    var fleetSocket: String { directory + "/fleet.sock" }
    var deviceSocket: String { directory + "/device.sock" }

    init(name: String, natsURL: String, storeArguments: [String] = []) {
        self.name = name
        self.natsURL = natsURL
        self.storeArguments = storeArguments
        directory = makeTestDirectory(prefix: "fleet-\(name)")
    }

    static func start(
        _ name: String, nats: TestNATSServer, environment: [String: String] = [:], fleetArguments: [String] = [],
        storeArguments: [String] = []
    ) async throws
        -> TestGateway
    {
        let gateway = TestGateway(name: name, natsURL: nats.url, storeArguments: storeArguments)
        try await gateway.startStore()
        try await gateway.startFleet(environment: environment, arguments: fleetArguments)
        return gateway
    }

    func startStore() async throws {
        let process = try ChildProcess(
            executable: productsDirectory + "/storesvc",
            arguments: ["--socket", storeSocket, "--database", directory + "/store.sqlite"] + storeArguments)
        storeProcess.withLock { $0 = process }
        let connected = try await connect(storeSocket, process: process)
        client.withLock { $0 = connected }
    }

    /// Starts fleetsvc with `arguments`; with `runsCommands`, on the devicesvc `startDevice` started (`--device`).
    func startFleet(
        environment: [String: String] = [:], arguments: [String] = [], runsCommands: Bool = false
    )
        async throws
    {
        let process = try ChildProcess(
            executable: productsDirectory + "/fleetsvc",
            arguments: [
                "--gateway", name, "--store", storeSocket, "--socket", fleetSocket, "--nats", natsURL,
                "--log-level", "debug",
            ] + arguments + (runsCommands ? ["--device", deviceSocket] : []), environment: environment)
        fleetProcess.withLock { $0 = process }
        try await connect(fleetSocket, process: process).close()
    }

    /// Starts a devicesvc on the simulated BlueZ at `bus`, recording into this gateway's store, and waits until
    /// BlueZ answers through it.
    func startDevice(bus: String) async throws {
        let process = try ChildProcess(
            executable: productsDirectory + "/devicesvc",
            arguments: ["--socket", deviceSocket, "--bus", bus, "--store", storeSocket])
        deviceProcess.withLock { $0 = process }
        let client = try await connect(deviceSocket, process: process)
        defer { client.close() }
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            do {
                _ = try await client.call(method: "device.adapters")
                return
            } catch let error as RPCError where error.code == .unavailable {
                guard ContinuousClock.now < deadline else { throw error }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    /// `method` on this gateway's devicesvc.
    func deviceCall(_ method: String, _ params: JSONValue = .object([:])) async throws -> JSONValue {
        let client = try await BusClient.connect(
            to: deviceSocket, clientName: "fleetsvc-tests", options: .init(callTimeout: .seconds(30)))
        defer { client.close() }
        return try await client.call(method: method, params: params)
    }

    /// `method` on this gateway's fleetsvc.
    func fleetCall(_ method: String, _ params: JSONValue = .object([:])) async throws -> JSONValue {
        let client = try await BusClient.connect(
            to: fleetSocket, clientName: "fleetsvc-tests", options: .init(callTimeout: .seconds(60)))
        defer { client.close() }
        return try await client.call(method: method, params: params)
    }

    var fleet: ChildProcess? { fleetProcess.withLock { $0 } }
    var storeService: ChildProcess? { storeProcess.withLock { $0 } }

    /// Kills fleetsvc (`kill -9`) and waits for it.
    func killFleet() async {
        guard let process = fleet else { return }
        process.send(signal: SIGKILL)
        _ = await process.waitForExit()
    }

    /// Kills storesvc (`kill -9`) and waits for it.
    func killStore() async {
        client.withLock { $0 }?.close()
        guard let process = storeService else { return }
        process.send(signal: SIGKILL)
        _ = await process.waitForExit()
    }

    /// The gateway's machine loses power: storesvc and fleetsvc get SIGKILL at once; waits for both.
    func killBoth() async {
        client.withLock { $0 }?.close()
        let processes = [storeService, fleet].compactMap { $0 }
        for process in processes { process.send(signal: SIGKILL) }
        for process in processes { _ = await process.waitForExit() }
    }

    func stop() {
        client.withLock { $0 }?.close()
        fleet?.stop()
        deviceProcess.withLock { $0 }?.stop()
        storeService?.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func connect(_ path: String, process: ChildProcess) async throws -> BusClient {
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            do {
                return try await BusClient.connect(
                    to: path, clientName: "fleetsvc-tests", options: .init(callTimeout: .seconds(10)))
            } catch {
                guard ContinuousClock.now < deadline else {
                    throw ChildProcessError.timedOut("a service at \(path)", output: "", errors: process.standardError)
                }
                try await Task.sleep(for: .milliseconds(25))
            }
        }
    }

    // MARK: - Calls

    func call(_ method: String, _ params: JSONValue = .object([:])) async throws -> JSONValue {
        try await client.withLock { $0 }!.call(method: method, params: params)
    }

    @discardableResult
    func save(_ params: JSONValue) async throws -> JSONValue {
        try await call("store.save", params)
    }

    func status() async throws -> JSONValue {
        let client = try await BusClient.connect(
            to: fleetSocket, clientName: "fleetsvc-tests", options: .init(callTimeout: .seconds(10)))
        defer { client.close() }
        return try await client.call(method: "fleet.status")
    }

    /// Every object of `entity`, as the store answers (`values` with IDs local to this gateway).
    func objects(_ entity: String) async throws -> [[String: JSONValue]] {
        let result = try await call("store.fetch", .object(["entity": .string(entity)]))
        return (result.objectValue?["objects"]?.arrayValue ?? []).compactMap(\.objectValue)
    }

    /// The gateway's data in a form that does not depend on local IDs: devices by address, readings by
    /// characteristic, with their device's address.
    func contents() async throws -> String {
        let devices = try await objects("Device")
        var addressOf: [String: String] = [:]
        var lines: [String] = []
        for device in devices {
            let values = device["values"]?.objectValue ?? [:]
            let address = values["address"]?.stringValue ?? "?"
            addressOf[device["id"]?.stringValue ?? ""] = address
            lines.append(
                "Device \(address) name=\(values["name"].map(describe) ?? "-") connected=\(values["connected"].map(describe) ?? "-")"
            )
        }
        for reading in try await objects("Reading") {
            let values = reading["values"]?.objectValue ?? [:]
            lines.append(
                "Reading \(values["characteristic"].map(describe) ?? "-") value=\(values["value"].map(describe) ?? "-") "
                    + "chain=\(values["chain"].map(describe) ?? "-") "
                    + "device=\(values["device"]?.stringValue.flatMap { addressOf[$0] } ?? "-")")
        }
        return lines.sorted().joined(separator: "\n")
    }

    private func describe(_ value: JSONValue) -> String {
        (try? JSONWriter().string(value)) ?? "?"
    }

    /// The local ID of the device with `address`.
    func device(_ address: String) async throws -> String? {
        let result = try await call(
            "store.fetch",
            .object([
                "entity": .string("Device"), "where": .string("address == $a"),
                "args": .object(["a": .string(address)]),
                "result": .string("ids"),
            ]))
        return result.objectValue?["ids"]?.arrayValue?.first?.stringValue
    }

    /// The local ID of the reading with `characteristic`.
    func reading(_ characteristic: String) async throws -> String? {
        let result = try await call(
            "store.fetch",
            .object([
                "entity": .string("Reading"), "where": .string("characteristic == $c"),
                "args": .object(["c": .string(characteristic)]), "result": .string("ids"),
            ]))
        return result.objectValue?["ids"]?.arrayValue?.first?.stringValue
    }
}

/// Waits until every gateway follows the stream (which then exists), has published all its transactions and
/// applied everything in the stream, and all hold the same data; returns that data. Fails with every gateway's data and status after `seconds`.
@discardableResult
func waitForConvergence(_ gateways: [TestGateway], seconds: Int = 60) async throws -> String {
    let deadline = ContinuousClock.now + .seconds(seconds)
    var last: [String] = []
    var unsettled = ""
    while true {
        var contents: [String] = []
        var settled = true
        unsettled = ""
        for gateway in gateways {
            let status = try? await gateway.status()
            if status?.objectValue?["pending"]?.intValue != 0 || status?.objectValue?["state"] != .string("following") {
                settled = false
                unsettled += " \(gateway.name): \(status.map { (try? JSONWriter().string($0)) ?? "" } ?? "no status")"
            }
            contents.append((try? await gateway.contents()) ?? "(unreachable)")
        }
        if settled, Set(contents).count == 1 { return contents[0] }
        last = contents
        guard ContinuousClock.now < deadline else {
            var report = "unsettled:\(unsettled); equal: \(Set(last).count == 1)"
            for (gateway, content) in zip(gateways, last) {
                let status = (try? await gateway.status()).map { (try? JSONWriter().string($0)) ?? "" } ?? "?"
                report += "\n== \(gateway.name) \(status)\n\(content)\n-- fleetsvc log tail:\n"
                report += String(gateway.fleet?.standardError.suffix(1500) ?? "")
                if let page = try? await gateway.call("store.history", .object(["since": .int(0), "limit": .int(30)])) {
                    report += "\n-- its first transactions: " + ((try? JSONWriter().string(page)) ?? "").prefix(6000)
                }
            }
            throw ChildProcessError.timedOut("the gateways to converge", output: report, errors: "")
        }
        try await Task.sleep(for: .milliseconds(200))
    }
}

/// A reading insert of `device` (an ID, or a ref of the same save).
func readingInsert(_ characteristic: String, device: JSONValue, chain: String? = nil) -> JSONValue {
    var values: [String: JSONValue] = [
        "characteristic": .string(characteristic), "value": .string("Wg=="), "time": .string("2026-01-01T00:00:00Z"),
        "device": device,
    ]
    if let chain { values["chain"] = .string(chain) }
    return .object(["entity": .string("Reading"), "values": .object(values)])
}

func deviceInsert(_ address: String, name: String, ref: String = "d") -> JSONValue {
    .object([
        "entity": .string("Device"), "ref": .string(ref),
        "values": .object(["address": .string(address), "name": .string(name)]),
    ])
}

/// The number of transactions in a gateway's history authored `author` (or by anyone else than `fleet:*`).
func transactions(of gateway: TestGateway, authoredBy author: String) async throws -> Int {
    var since: Int64 = 0
    var count = 0
    while true {
        let page = try await gateway.call("store.history", .object(["since": .int(since)]))
        let transactions = page.objectValue?["transactions"]?.arrayValue ?? []
        if transactions.isEmpty { return count }
        for transaction in transactions {
            if transaction.objectValue?["author"]?.stringValue == author { count += 1 }
            since = transaction.objectValue?["txn"]?.intValue ?? since
        }
    }
}

/// The txns of `gateway` in the order the fleet's stream holds them, each at its first occurrence (a duplicate
/// published after the duplicate window is left out), read with a consumer of the test's own.
func streamOrder(of gateway: String, nats: TestNATSServer) async throws -> [Int64] {
    let peer = try JetStream(settings: .init(url: nats.url, name: "fleetsvc-tests"))
    defer { peer.close() }
    let reader = try peer.reader(of: "ctxbus.default.\(gateway).txn", from: 1)
    defer { reader.close() }
    var order: [Int64] = []
    while true {
        let messages = try reader.fetch(batch: 256, timeoutMilliseconds: 1_000)
        for message in messages {
            let txn = try FleetMessage(bytes: message.data).txn
            if !order.contains(txn) { order.append(txn) }
        }
        if messages.isEmpty || messages.last?.pending == 0 { break }
    }
    return order
}
