import Foundation
@preconcurrency import Glibc

/// The simulated BlueZ of `scripts/bluez-sim --background` (docs/bluez-sim.md), stopped by PID.
public final class TestBlueZSimulator: Sendable {
    /// Whether the machine can run it: dbus-daemon, python3, and Debian's python3-dbus and python3-gi.
    ///
    /// Checked by looking for the files rather than by running python: a Foundation `Process` waited for
    /// here would block whichever thread evaluates the trait.
    public static let isSupported: Bool = {
        let files = FileManager.default
        return files.isExecutableFile(atPath: "/usr/bin/dbus-daemon")
            && files.isExecutableFile(atPath: "/usr/bin/python3")
            && files.fileExists(atPath: "/usr/lib/python3/dist-packages/dbus/__init__.py")
            && files.fileExists(atPath: "/usr/lib/python3/dist-packages/gi/__init__.py")
    }()

    public let busAddress: String
    public let pid: pid_t
    public let directory: String

    /// The repository's root (this file is `Tests/TestSupport/TestBlueZSimulator.swift`).
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path

    private init(busAddress: String, pid: pid_t, directory: String) {
        self.busAddress = busAddress
        self.pid = pid
        self.directory = directory
    }

    /// Starts the simulator in the background and reads its address and PID.
    public static func start() async throws -> TestBlueZSimulator {
        let directory = makeTestDirectory(prefix: "ctxbus-sim")
        let launcher = try ChildProcess(
            executable: Self.repositoryRoot + "/scripts/bluez-sim",
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

    public func stop() {
        kill(pid, SIGTERM)
        try? FileManager.default.removeItem(atPath: directory)
    }
}
