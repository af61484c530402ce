import Foundation
@preconcurrency import Glibc

@testable import ContextBusDBus
@testable import devicesvc

/// The simulated BlueZ of `scripts/bluez-sim` (docs/bluez-sim.md), started with `--background` for one test and
/// stopped by its PID; its control interface is called over our own D-Bus client.
final class BlueZSimulator: Sendable {
    /// The repository root (this file is `Tests/devicesvcTests/Support/BlueZSimulator.swift`).
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// Whether the machine can run the simulator (dbus-daemon and Debian's python3-dbus).
    static let isSupported = DBusTestEnvironment.hasDaemon && DBusTestEnvironment.hasPythonDBus

    let busAddress: String
    let pid: pid_t
    let directory: String
    let control: DBusConnection

    private init(busAddress: String, pid: pid_t, directory: String, control: DBusConnection) {
        self.busAddress = busAddress
        self.pid = pid
        self.directory = directory
        self.control = control
    }

    /// Starts a simulator with `options` (`--timing NAME=MS`, `--devices N`, …).
    static func start(_ options: [String] = []) async throws -> BlueZSimulator {
        let work = makeTemporaryDirectory()
        let launcher = try TestProcess(
            executable: repositoryRoot + "/scripts/bluez-sim",
            arguments: ["--background", "--ready-file", work + "/ready", "--output", work + "/sim.log"] + options,
            lifetimeSeconds: 600)
        // The first run creates the simulator's venv, which may take a minute.
        let values = try await offThePool { () throws -> [String: String] in
            defer { launcher.waitForExit(milliseconds: 5_000) }
            var values: [String: String] = [:]
            while values["BLUEZ_SIM_DIR"] == nil {
                let line = try launcher.readLine(timeoutSeconds: 180)
                guard let equals = line.firstIndex(of: "=") else { continue }
                values[String(line[..<equals])] = String(line[line.index(after: equals)...])
            }
            return values
        }
        guard let address = values["DBUS_SYSTEM_BUS_ADDRESS"], let pid = values["BLUEZ_SIM_PID"].flatMap(Int32.init)
        else { throw TestProcessError.noOutput(pid: launcher.pid) }
        do {
            let control = try await DBusConnection.connect(to: address, timeout: .seconds(20))
            return BlueZSimulator(busAddress: address, pid: pid, directory: work, control: control)
        } catch {
            kill(pid, SIGTERM)
            throw error
        }
    }

    /// Stops the simulator (SIGTERM to its PID) and waits until it is gone, on a thread of its own.
    func stop() async {
        await offThePool { self.stopNow() }
    }

    /// Stops the simulator and waits until it is gone, blocking the calling thread.
    func stopNow() {
        control.close()
        kill(pid, SIGTERM)
        for _ in 0..<500 where kill(pid, 0) == 0 { usleep(10_000) }
        try? FileManager.default.removeItem(atPath: directory)
    }

    // MARK: - Control interface

    @discardableResult
    func callControl(_ member: String, _ body: [DBusValue] = []) async throws -> DBusMessage {
        try await control.call(
            destination: "org.contextbus.BlueZSim", path: .root, interface: "org.contextbus.BlueZSim.Control",
            member: member, body: body, timeout: .seconds(20))
    }

    /// The next `count` matching calls fail with `error` (`count` 0: until cleared).
    func fail(_ target: String, _ method: String, with error: String, message: String, count: Int32 = 1) async throws {
        try await callControl(
            "FailMethod", [.string(target), .string(method), .string(error), .string(message), .int32(count)])
    }

    /// The next `count` matching calls never get a reply.
    func hang(_ target: String, _ method: String, count: Int32 = 1) async throws {
        try await callControl("HangMethod", [.string(target), .string(method), .int32(count)])
    }

    /// The next `count` connections never resolve their services.
    func neverResolveServices(_ target: String, count: Int32 = 1) async throws {
        try await callControl("NeverResolveServices", [.string(target), .int32(count)])
    }

    /// The link drops right after the `notifications`-th notification on `target` (`ADDRESS/UUID`).
    func dropDuringNotify(_ target: String, after notifications: UInt32, count: Int32 = 1) async throws {
        try await callControl("DropDuringNotify", [.string(target), .uint32(notifications), .int32(count)])
    }

    /// Link loss now (`true` when there was a link).
    @discardableResult
    func dropConnection(_ address: String) async throws -> Bool {
        try await callControl("DropConnection", [.string(address), .uint32(0)]).body.first?.boolValue ?? false
    }

    /// Out of range: the link drops, discovery does not find the device, connects fail.
    func setInRange(_ address: String, _ inRange: Bool) async throws {
        try await callControl("SetInRange", [.string(address), .boolean(inRange)])
    }

    /// `count` notifications of `value` in a row on `target` (`ADDRESS/UUID`); how many reached a client.
    func notifyMany(_ target: String, _ value: [UInt8], count: UInt32) async throws -> UInt32 {
        try await callControl("NotifyMany", [.string(target), .bytes(value), .uint32(count)]).body.first?.uint32Value
            ?? 0
    }

    /// A notification every `intervalMs` on `target`, `count` in all: sequence number (uint32) and send time
    /// (CLOCK_MONOTONIC ns, uint64), little-endian.
    func startStream(_ target: String, intervalMs: UInt32, count: UInt32) async throws {
        try await callControl("StartStream", [.string(target), .uint32(intervalMs), .uint32(count)])
    }

    func stopStreams() async throws { try await callControl("StopStreams") }

    /// The sequence numbers of the stream values on `target` the simulator sent to clients (notifying on a live link),
    /// in order: what a client holding the link throughout must have received.
    func streamDeliveries(_ target: String) async throws -> [UInt32] {
        (try await callControl("StreamDeliveries", [.string(target)]).body.first?.arrayValue ?? []).compactMap(
            \.uint32Value)
    }

    /// How many logged calls of `method` went to `target`.
    func countCalls(_ target: String, _ method: String) async throws -> Int {
        Int(try await callControl("CountCalls", [.string(target), .string(method)]).body.first?.uint32Value ?? 0)
    }

    /// The device's advertised service data under `uuid` (empty removes it).
    func setServiceData(_ address: String, _ uuid: String, _ data: [UInt8]) async throws {
        try await callControl("SetServiceData", [.string(address), .string(uuid), .bytes(data)])
    }

    /// Any Device1 property, any type (malformed advertised data).
    func setDeviceProperty(_ address: String, _ name: String, _ value: DBusValue) async throws {
        try await callControl("SetDeviceProperty", [.string(address), .string(name), .variant(value)])
    }

    func setTiming(_ name: String, milliseconds: UInt32) async throws {
        try await callControl("SetTiming", [.string(name), .uint32(milliseconds)])
    }

    func stopBluetoothd() async throws { try await callControl("StopBluetoothd") }
    func startBluetoothd() async throws { try await callControl("StartBluetoothd") }
    func clearCallLog() async throws { try await callControl("ClearCallLog") }

    /// One entry of the call log.
    struct Call: Sendable, Hashable, CustomStringConvertible {
        var path: String
        var method: String
        /// The simulator's summary of the arguments (`0x01, {type: request}`; a dictionary's entries by key).
        var arguments: String
        var outcome: String

        /// The device the call was for (`AA:BB:CC:DD:EE:01`), from its path.
        var address: String? {
            guard let range = path.range(of: "dev_") else { return nil }
            return String(path[range.upperBound...].prefix(17)).replacingOccurrences(of: "_", with: ":")
        }

        var description: String { "\(method) \(path) -> \(outcome)" }
    }

    /// Every call to bluetoothd since the log was last cleared, in arrival order.
    func callLog() async throws -> [Call] {
        let reply = try await callControl("GetCallLog")
        return (reply.body.first?.arrayValue ?? []).compactMap { entry in
            guard let fields = entry.structureValue, fields.count == 7, let path = fields[2].stringValue,
                let method = fields[4].stringValue, let arguments = fields[5].stringValue,
                let outcome = fields[6].stringValue
            else { return nil }
            return Call(path: path, method: method, arguments: arguments, outcome: outcome)
        }
    }
}
