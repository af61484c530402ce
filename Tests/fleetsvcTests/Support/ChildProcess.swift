import Dispatch
import Foundation
@preconcurrency import Glibc

@testable import ContextBusSupport

/// A process started for a test with `posix_spawn`, its standard output and error going to files in
/// its own temporary directory, stopped by PID.
///
/// `posix_spawn` with the signal mask and handlers reset, because Foundation's `Process` passes on the test
/// runner's mask, in which SIGTERM is blocked. Nothing here blocks a thread of the cooperative pool: exits
/// are awaited on a dispatch thread of their own, output is polled with `Task.sleep`.
final class ChildProcess: Sendable {
    let pid: pid_t
    let directory: String
    /// The command line it was started with, to recognise it in `/proc` before signalling it.
    private let commandLine: [String]
    private let exitStatus = Locked<Int32?>(nil)

    var standardOutputPath: String { directory + "/stdout" }
    var standardErrorPath: String { directory + "/stderr" }

    /// Starts `executable`; `standardInput` (if any) is written to a file and given as standard input.
    init(
        executable: String, arguments: [String], environment: [String: String] = [:], standardInput: String? = nil
    ) throws {
        directory = makeTestDirectory(prefix: "ctxbus-child")
        let inputPath = directory + "/stdin"
        try (standardInput ?? "").write(toFile: inputPath, atomically: true, encoding: .utf8)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, inputPath, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, directory + "/stdout", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, directory + "/stderr", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var environmentValues = ProcessInfo.processInfo.environment
        for name in ["CTXBUS_STORE_SOCKET", "CTXBUS_DEVICE_SOCKET", "CTXBUS_RUNTIME_DIR", "XDG_RUNTIME_DIR"] {
            environmentValues[name] = nil
        }
        for (name, value) in environment { environmentValues[name] = value }
        let argv = [executable] + arguments
        var cArguments = argv.map { strdup($0) } + [nil]
        var cEnvironment = environmentValues.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for argument in cArguments { free(argument) }
            for entry in cEnvironment { free(entry) }
        }
        var child: pid_t = 0
        let result = posix_spawn(&child, executable, &actions, &attributes, &cArguments, &cEnvironment)
        guard result == 0 else { throw ChildProcessError.spawnFailed(executable, result) }
        pid = child
        commandLine = argv
    }

    /// Whether `pid` is still this process: its `/proc/PID/cmdline` is the command line it was started with.
    ///
    /// Other code in the test process may reap children it did not start (`waitpid(-1)`), after which the pid
    /// can be reused by another test's process; a signal must never reach that one.
    var isStillThisProcess: Bool {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
        let words = data.split(separator: 0, omittingEmptySubsequences: false).dropLast().map {
            String(decoding: $0, as: UTF8.self)
        }
        return words == commandLine
    }

    /// What the process has written to standard output so far.
    var standardOutput: String { (try? String(contentsOfFile: standardOutputPath, encoding: .utf8)) ?? "" }
    /// What the process has written to standard error so far.
    var standardError: String { (try? String(contentsOfFile: standardErrorPath, encoding: .utf8)) ?? "" }

    func send(signal: Int32) {
        if isStillThisProcess { kill(pid, signal) }
    }

    /// Waits (on a thread of its own) for the process to end: its exit status, or 128 + the signal that ended it.
    func waitForExit() async -> Int32 {
        if let status = exitStatus.withLock({ $0 }) { return status }
        let pid = self.pid
        let status = await withLockedContinuation { (continuation: LockedContinuation<Int32, Never>) in
            DispatchQueue(label: "fleetsvc-tests.waitpid").async {
                var status: Int32 = 0
                let result = retryingInterrupts { waitpid(pid, &status, 0) }
                // -1: reaped by someone else, the status is unknown.
                guard result == pid else { return continuation.resume(returning: -1) }
                // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import.
                continuation.resume(returning: status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f))
            }
        }
        exitStatus.withLock { $0 = status }
        return status
    }

    /// Waits until `condition` holds for the output so far (a guard against hanging, not a timing check).
    func waitUntil(
        seconds: Int = 60, _ what: String, _ condition: @Sendable (_ output: String, _ errors: String) -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while !condition(standardOutput, standardError) {
            guard ContinuousClock.now < deadline else {
                throw ChildProcessError.timedOut(what, output: standardOutput, errors: standardError)
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Kills the process if it still runs (reaped on a thread of its own) and removes its directory.
    func stop() {
        if exitStatus.withLock({ $0 }) == nil, isStillThisProcess {
            kill(pid, SIGKILL)
            let pid = self.pid
            DispatchQueue(label: "fleetsvc-tests.reap").async {
                var status: Int32 = 0
                _ = waitpid(pid, &status, 0)
            }
        }
        try? FileManager.default.removeItem(atPath: directory)
    }
}

enum ChildProcessError: Error, CustomStringConvertible {
    case spawnFailed(String, Int32)
    case timedOut(String, output: String, errors: String)

    var description: String {
        switch self {
        case .spawnFailed(let executable, let code):
            return "posix_spawn \(executable) failed: \(String(cString: strerror(code)))"
        case .timedOut(let what, let output, let errors):
            return "timed out waiting for \(what); stdout:\n\(output)\nstderr:\n\(errors)"
        }
    }
}

/// A fresh temporary directory.
func makeTestDirectory(prefix: String) -> String {
    var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
    let path = template.withUnsafeMutableBufferPointer { buffer in mkdtemp(buffer.baseAddress!) }
    precondition(path != nil, "mkdtemp failed")
    return String(cString: path!)
}

/// The directory holding the built products (the test bundle's own build directory).
let productsDirectory: String = {
    let bundle = Bundle.main.bundleURL
    return (bundle.pathExtension == "xctest" ? bundle.deletingLastPathComponent() : bundle).path
}()
