@preconcurrency import Glibc

/// Log lines on standard error: `storesvc: <level>: <message>`, filtered by `--log-level`.
struct ServiceLog: Sendable {
    var level: LogLevel

    /// A log that writes nothing (tests).
    static let silent = ServiceLog(level: .error, isSilent: true)

    private var isSilent = false

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

    /// Writes `storesvc: <message>` to standard error, whatever the level (command-line errors).
    static func printError(_ message: String) {
        fputs("storesvc: \(message)\n", stderr)
    }

    private func write(_ lineLevel: LogLevel, _ message: () -> String) {
        guard !isSilent, lineLevel <= level else { return }
        fputs("storesvc: \(lineLevel.rawValue): \(message())\n", stderr)
    }
}
