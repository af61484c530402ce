/// Log lines on standard error, `<program>: <level>: <message>`, filtered by `--log-level`.
package struct ServiceLog: Sendable {
    /// The program name each line starts with (`storesvc`).
    package var program: String
    package var level: LogLevel
    private var isSilent = false

    /// A log that writes nothing (tests).
    package static let silent = ServiceLog(program: "", level: .error, isSilent: true)

    package init(program: String, level: LogLevel) {
        self.program = program
        self.level = level
    }

    private init(program: String, level: LogLevel, isSilent: Bool) {
        self.init(program: program, level: level)
        self.isSilent = isSilent
    }

    package func error(_ message: @autoclosure () -> String) { write(.error, message) }
    package func warning(_ message: @autoclosure () -> String) { write(.warning, message) }
    package func info(_ message: @autoclosure () -> String) { write(.info, message) }
    package func debug(_ message: @autoclosure () -> String) { write(.debug, message) }

    /// Writes `<program>: <message>` to standard error, whatever the level (command-line errors).
    package static func printError(_ message: String, program: String) {
        writeToStandardError("\(program): \(message)\n")
    }

    private func write(_ lineLevel: LogLevel, _ message: () -> String) {
        guard !isSilent, lineLevel <= level else { return }
        writeToStandardError("\(program): \(lineLevel.rawValue): \(message())\n")
    }
}
