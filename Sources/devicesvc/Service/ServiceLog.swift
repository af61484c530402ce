@preconcurrency import Glibc

/// Log lines on standard error: `devicesvc: <level>: <message>`, filtered by `--log-level`.
struct ServiceLog: Sendable {
    var level: LogLevel
    private var isSilent = false

    /// A log that writes nothing (tests).
    static let silent = ServiceLog(level: .error, isSilent: true)

    init(level: LogLevel) {
        self.level = level
    }

    private init(level: LogLevel, isSilent: Bool) {
        self.level = level
        self.isSilent = isSilent
    }

    func error(_ message: @autoclosure () -> String) { write(.error, message) }
    func warning(_ message: @autoclosure () -> String) { write(.warning, message) }
    func info(_ message: @autoclosure () -> String) { write(.info, message) }
    func debug(_ message: @autoclosure () -> String) { write(.debug, message) }

    /// Writes `devicesvc: <message>` to standard error, whatever the level (command-line errors).
    static func printError(_ message: String) {
        fputs("devicesvc: \(message)\n", stderr)
    }

    private func write(_ lineLevel: LogLevel, _ message: () -> String) {
        guard !isSilent, lineLevel <= level else { return }
        fputs("devicesvc: \(lineLevel.rawValue): \(message())\n", stderr)
    }
}
