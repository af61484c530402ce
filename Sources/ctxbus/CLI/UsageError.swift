/// A command line `ctxbus` cannot make sense of; printed with the command's usage line, exit
/// status 64 (`ExitStatus.usage`).
struct UsageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// One line: what is wrong.
    var message: String
    /// More lines, printed below the message as they are (e.g. a chain with a caret under the bad
    /// token).
    var detail: [String] = []

    init(_ message: String, detail: [String] = []) {
        self.message = message
        self.detail = detail
    }

    var description: String { ([message] + detail).joined(separator: "\n") }

    static func unknownOption(_ word: String) -> UsageError { UsageError("unknown option '\(word)'") }

    static func missingValue(for option: String) -> UsageError {
        UsageError("missing value for '--\(option)'")
    }

    static func missingArgument(_ name: String) -> UsageError { UsageError("missing <\(name)>") }

    static func unexpectedArgument(_ word: String) -> UsageError { UsageError("unexpected argument '\(word)'") }

    static func invalidValue(_ value: String, for option: String, expected: String) -> UsageError {
        UsageError("invalid value '\(value)' for '--\(option)': expected \(expected)")
    }
}
