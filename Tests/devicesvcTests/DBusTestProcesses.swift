import Foundation
@preconcurrency import Glibc
import Testing

@testable import ContextBusDBus
@testable import ContextBusSupport
@testable import devicesvc

/// Test fixtures that run real processes: a private `dbus-daemon` and a python-dbus service.
///
/// Each fixture gets its own temporary directory and is stopped by its PID. Every process runs under
/// `/usr/bin/timeout`, so one left behind by a crashed test run still ends by itself.

/// A process started for a test with `posix_spawn`, stopped by PID.
///
/// Foundation's `Process` passes on the spawning thread's signal mask, in which the test runner blocks `SIGTERM`,
/// so its children could not be terminated; this spawner resets the mask and the handlers. The process runs
/// under `/usr/bin/timeout` in its own process group, which `stop()` signals as a whole.
final class TestProcess: Sendable {
    let pid: pid_t
    private let outputDescriptor: Int32

    /// Starts `executable` under `timeout` with its standard output piped to the test.
    ///
    /// - Parameters:
    ///   - lifetimeSeconds: the `timeout` limit; `nil` runs the executable directly (its exit status is then its
    ///     own, for tests that check it).
    ///   - standardErrorPath: a file to append standard error to (default: discarded).
    ///   - environment: variables added to the test's own (through `/usr/bin/env`).
    init(
        executable: String, arguments: [String], lifetimeSeconds: Int? = 300, standardErrorPath: String? = nil,
        environment: [String: String] = [:]
    ) throws {
        var pipeDescriptors: [Int32] = [0, 0]
        guard pipe(&pipeDescriptors) == 0 else { throw TestProcessError.spawnFailed(errno) }
        for descriptor in pipeDescriptors { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipeDescriptors[1], 1)
        posix_spawn_file_actions_addopen(
            &actions, 2, standardErrorPath ?? "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0o644)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))
        let argv =
            (lifetimeSeconds.map { ["/usr/bin/timeout", "--signal=TERM", String($0)] } ?? [])
            + (environment.isEmpty
                ? [] : ["/usr/bin/env"] + environment.sorted { $0.key < $1.key }.map { "\($0)=\($1)" })
            + [executable] + arguments
        var cArguments = argv.map { strdup($0) } + [nil]
        defer { for argument in cArguments { free(argument) } }
        var child: pid_t = 0
        let result = posix_spawn(&child, argv[0], &actions, &attributes, &cArguments, environ)
        close(pipeDescriptors[1])
        guard result == 0 else {
            close(pipeDescriptors[0])
            throw TestProcessError.spawnFailed(result)
        }
        pid = child
        outputDescriptor = pipeDescriptors[0]
    }

    /// Reads one line of standard output, waiting at most `seconds`.
    func readLine(timeoutSeconds seconds: Int32 = 20) throws -> String {
        var line: [UInt8] = []
        while true {
            var poller = pollfd(fd: outputDescriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, seconds * 1000) > 0 else { throw TestProcessError.noOutput(pid: pid) }
            var byte: UInt8 = 0
            guard read(outputDescriptor, &byte, 1) == 1 else { throw TestProcessError.closedOutput(pid: pid) }
            if byte == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
            line.append(byte)
        }
    }

    /// Terminates the process group (SIGTERM, then SIGKILL after 5 s) and reaps the process. Idempotent.
    func stop() {
        guard !hasExited(waitingUpTo: 0) else { return }
        kill(-pid, SIGTERM)
        if !hasExited(waitingUpTo: 5_000) {
            kill(-pid, SIGKILL)
            _ = hasExited(waitingUpTo: 5_000)
        }
    }

    /// Sends `signal` to the process alone (not its group).
    func send(signal: Int32) {
        kill(pid, signal)
    }

    /// Waits for the process to end by itself; `false` if it is still running after `milliseconds`.
    @discardableResult
    func waitForExit(milliseconds: Int = 20_000) -> Bool {
        hasExited(waitingUpTo: milliseconds)
    }

    private let reaped = Locked(false)
    private let status = Locked<Int32?>(nil)

    /// The exit status, once the process has exited normally and was reaped (`nil` while running or when a
    /// signal ended it).
    var exitStatus: Int32? { status.withLock { $0 } }

    private func hasExited(waitingUpTo milliseconds: Int) -> Bool {
        reaped.withLock { isReaped in
            if isReaped { return true }
            for _ in 0...(milliseconds / 10) {
                var status: Int32 = 0
                let result = waitpid(pid, &status, WNOHANG)
                if result == pid || (result < 0 && errno == ECHILD) {
                    isReaped = true
                    // WIFEXITED / WEXITSTATUS, which Swift does not import.
                    if result == pid, status & 0x7f == 0 { self.status.withLock { $0 = (status >> 8) & 0xff } }
                    close(outputDescriptor)
                    return true
                }
                if milliseconds > 0 { usleep(10_000) }
            }
            return false
        }
    }
}

enum TestProcessError: Error, CustomStringConvertible {
    case noOutput(pid: Int32)
    case closedOutput(pid: Int32)
    case spawnFailed(Int32)

    var description: String {
        switch self {
        case .noOutput(let pid): return "process \(pid) printed no line in time"
        case .closedOutput(let pid): return "process \(pid) closed its output (exited?) before printing a line"
        case .spawnFailed(let code): return "posix_spawn failed: \(String(cString: strerror(code)))"
        }
    }
}

/// Makes a fresh temporary directory.
func makeTemporaryDirectory() -> String {
    var template = Array("/tmp/devicesvc-dbus-XXXXXX".utf8CString)
    let path = template.withUnsafeMutableBufferPointer { buffer in mkdtemp(buffer.baseAddress!) }
    precondition(path != nil, "mkdtemp failed")
    return String(cString: path!)
}

/// A private `dbus-daemon` listening on a socket path and an abstract socket in a temporary directory.
final class PrivateBus: Sendable {
    let directory: String
    /// The address list the daemon printed: the abstract socket, then the path.
    let address: String
    let daemon: TestProcess

    var socketPath: String { directory + "/bus" }

    init() throws {
        directory = makeTemporaryDirectory()
        let abstractName = directory + "-abstract"
        let config = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:path=\(directory)/bus</listen>
              <listen>unix:abstract=\(abstractName)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>
            """
        try config.write(toFile: directory + "/bus.conf", atomically: true, encoding: .utf8)
        daemon = try TestProcess(
            executable: "/usr/bin/dbus-daemon",
            arguments: ["--config-file=\(directory)/bus.conf", "--nofork", "--print-address=1"])
        do {
            address = try daemon.readLine()
        } catch {
            daemon.stop()
            throw error
        }
    }

    /// The `unix:path=` address alone.
    var pathAddress: String { "unix:path=\(socketPath)" }

    func connect() async throws -> DBusConnection {
        try await DBusConnection.connect(to: pathAddress, timeout: .seconds(20))
    }

    /// Stops the daemon and removes its directory.
    func stop() {
        daemon.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// Whether the machine has what the process-backed tests need.
enum DBusTestEnvironment {
    static let hasDaemon = FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon")
    static let hasPythonDBus: Bool = {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") else { return false }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", "import dbus, dbus.mainloop.glib, gi.repository.GLib"]
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }()
}

/// Waits for the first element of `stream`, failing after `seconds` (a guard against hanging, not a timing check).
func firstElement<Element: Sendable>(of stream: AsyncStream<Element>, within seconds: Int = 20) async throws -> Element
{
    try await firstElements(of: stream, count: 1, within: seconds)[0]
}

/// Waits for the first `count` elements of `stream`, failing after `seconds` (a guard against hanging).
func firstElements<Element: Sendable>(
    of stream: AsyncStream<Element>, count: Int, within seconds: Int = 20
) async throws -> [Element] {
    try await withThrowingTaskGroup(of: [Element]?.self) { group in
        group.addTask {
            var elements: [Element] = []
            for await element in stream {
                elements.append(element)
                if elements.count == count { break }
            }
            return elements.count == count ? elements : nil
        }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let elements = first else { throw StreamWaitError.nothingArrived }
        return elements
    }
}

enum StreamWaitError: Error {
    case nothingArrived
}

/// Runs `body` with a connection to a fresh private bus; stops the bus afterwards.
func withPrivateBus(_ body: (PrivateBus, DBusConnection) async throws -> Void) async throws {
    let bus = try PrivateBus()
    defer { bus.stop() }
    let connection = try await bus.connect()
    defer { connection.close() }
    try await body(bus, connection)
}

/// Runs `body` with a private bus, a connection to it and the python service on it; stops them afterwards.
func withPythonService(_ body: (PrivateBus, DBusConnection, PythonService) async throws -> Void) async throws {
    try await withPrivateBus { bus, connection in
        let service = try PythonService(bus: bus)
        defer { service.stop() }
        try await body(bus, connection, service)
    }
}

/// A thread-safe list that handlers append to and tests read.
final class Recorder<Element: Sendable>: Sendable {
    private let storage = Locked<[Element]>([])

    func append(_ element: Element) { storage.withLock { $0.append(element) } }

    var elements: [Element] { storage.withLock { $0 } }
}
