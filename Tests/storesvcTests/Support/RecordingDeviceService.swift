import Foundation
@preconcurrency import Glibc
import TestSupport

/// A real `devicesvc` on the simulated BlueZ (`scripts/bluez-sim`), recording `record: true` chains into a storesvc:
/// the power-cut rounds' recording client runs its chains (`PowerCutLoad`). It lives across the rounds, as the
/// gateway's radio side would across restarts of the store (its recorder connects again for each recording), so that
/// its chain IDs (`c-N`, the readings' `chain`) stay unique.
final class RecordingDeviceService: Sendable {
    /// The simulated devices the recording client reads, one client each.
    static let addresses = ["AA:BB:CC:DD:EE:01", "AA:BB:CC:DD:EE:02"]
    /// The characteristics each chain reads: one `Reading` each in its recording.
    static let characteristics = ["2a19", "2a29"]

    /// Whether the machine can run it: dbus-daemon, Debian's python3-dbus and python3-gi (the simulator's), and a
    /// built devicesvc.
    static let isSupported: Bool = {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon"),
            FileManager.default.isExecutableFile(atPath: executablePath)
        else { return false }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", "import dbus, dbus.mainloop.glib, gi.repository.GLib"]
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }()

    /// The built devicesvc, beside storesvc.
    static var executablePath: String { productsDirectory().appendingPathComponent("devicesvc").path }

    let socketPath: String
    private let simulatorPID: pid_t
    private let service: ChildProcess

    private init(socketPath: String, simulatorPID: pid_t, service: ChildProcess) {
        self.socketPath = socketPath
        self.simulatorPID = simulatorPID
        self.service = service
    }

    /// Starts the simulator and devicesvc (`--store storeSocket`), blocking until devicesvc answers with BlueZ on
    /// the bus.
    static func start(storeSocket: String, in directory: String) throws -> RecordingDeviceService {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().path
        let launcher = try ChildProcess(
            executable: root + "/scripts/bluez-sim",
            arguments: ["--background", "--ready-file", directory + "/sim.ready", "--output", directory + "/sim.log"])
        defer { launcher.stop() }
        // The first run on a machine creates the simulator's venv, which may take a minute: a guard, not a timing.
        var values: [String: String] = [:]
        let deadline = ContinuousClock.now + .seconds(180)
        while values["BLUEZ_SIM_PID"] == nil || values["DBUS_SYSTEM_BUS_ADDRESS"] == nil {
            guard ContinuousClock.now < deadline else {
                throw ChildProcessError.timedOut(
                    "the simulated BlueZ", output: launcher.standardOutput, errors: launcher.standardError)
            }
            Thread.sleep(forTimeInterval: 0.05)
            for line in launcher.standardOutput.split(separator: "\n") {
                guard let equals = line.firstIndex(of: "=") else { continue }
                values[String(line[..<equals])] = String(line[line.index(after: equals)...])
            }
        }
        let simulatorPID = pid_t(values["BLUEZ_SIM_PID"]!) ?? 0
        // The launcher exits once the simulator is ready: reaped here, so that it leaves no zombie.
        var status: Int32 = 0
        while waitpid(launcher.pid, &status, WNOHANG) == 0, ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.02)
        }
        let socketPath = directory + "/device.sock"
        let service: ChildProcess
        do {
            service = try ChildProcess(
                executable: executablePath,
                arguments: [
                    "--socket", socketPath, "--bus", values["DBUS_SYSTEM_BUS_ADDRESS"]!, "--store", storeSocket,
                    "--log-level", "info",
                ])
        } catch {
            kill(simulatorPID, SIGTERM)
            throw error
        }
        let started = RecordingDeviceService(socketPath: socketPath, simulatorPID: simulatorPID, service: service)
        // Serving, and BlueZ loaded (`device.adapters` answers something other than 503).
        while true {
            if let connection = try? RawBusConnection(path: socketPath), (try? connection.hello()) != nil,
                let answer = try? connection.call(2, "device.adapters"), answer["result"] != nil
            {
                return started
            }
            guard ContinuousClock.now < deadline else {
                started.stop()
                throw ChildProcessError.timedOut("devicesvc with BlueZ", output: "", errors: service.standardError)
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// devicesvc's log so far.
    var log: String { service.standardError }

    /// Stops devicesvc (by its PID) and the simulator.
    func stop() {
        service.stop()
        kill(simulatorPID, SIGTERM)
    }

    /// `device.run` params of one recording chain of `address`: connect, read each of `characteristics`, disconnect.
    static func chain(_ address: String) -> String {
        let reads = characteristics.map { #"{"op":"read","characteristic":"\#($0)"}"# }.joined(separator: ",")
        return #"{"address":"\#(address)","steps":[{"op":"connect"},\#(reads),{"op":"disconnect"}],"record":true}"#
    }
}
