import Foundation
import TestSupport

/// The built `ctxbus` binary, run as a user would.
enum Ctxbus {
    static var executable: String { productsDirectory + "/ctxbus" }

    /// What one run printed and how it ended.
    struct Outcome: Sendable {
        var status: Int32
        var output: String
        var errors: String

        var outputLines: [String] { output.split(separator: "\n").map(String.init) }
    }

    /// Runs `ctxbus arguments…` to its end.
    static func run(
        _ arguments: [String], environment: [String: String] = [:], standardInput: String? = nil
    ) async throws -> Outcome {
        let process = try ChildProcess(
            executable: executable, arguments: arguments, environment: environment, standardInput: standardInput)
        defer { process.stop() }
        let status = await process.waitForExit()
        return Outcome(status: status, output: process.standardOutput, errors: process.standardError)
    }

    /// Starts `ctxbus arguments…` without waiting for it (for `watch`).
    static func start(_ arguments: [String], environment: [String: String] = [:]) throws -> ChildProcess {
        try ChildProcess(executable: executable, arguments: arguments, environment: environment)
    }
}
