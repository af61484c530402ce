import ContextBusObjectGraph
import ContextBusSupport
import Foundation

/// Log lines on standard error, filtered by `--log-level`, in one of two formats (`--log-format`):
///
/// - `text` (default): `<program>: <level>: <message>`, then ` key=value` for each field;
/// - `json`: one JSON object per line, `{"time","level","service","message",…fields}`: `time` in RFC 3339 (UTC,
///   milliseconds), `level` one of `error`, `warning`, `info`, `debug`, `service` the program, then the
///   line's fields as members of their own (a field never replaces one of the four).
///
/// When standard error is the systemd journal (`$JOURNAL_STREAM` names its device and inode, as systemd sets it
/// for a service's output), each line starts with its syslog priority, `<3>` for errors, `<4>` warnings, `<6>`
/// info and `<7>` debug, which journald takes as the entry's priority (`journalctl -p warning`) and strips.
package struct ServiceLog: Sendable {
    /// The program name each line starts with (`storesvc`).
    package var program: String
    package var level: LogLevel
    package var format: LogFormat
    /// Whether lines carry a syslog priority prefix (standard error is the journal).
    package var hasPriorityPrefix: Bool
    private var isSilent = false

    /// A log that writes nothing (tests).
    package static let silent = ServiceLog(program: "", level: .error, isSilent: true)

    /// A log for `program` writing lines at `level` and above in `format`; `hasPriorityPrefix` defaults to
    /// whether standard error is the journal (`isJournal(environment:)`).
    package init(program: String, level: LogLevel, format: LogFormat = .text, hasPriorityPrefix: Bool? = nil) {
        self.program = program
        self.level = level
        self.format = format
        self.hasPriorityPrefix =
            hasPriorityPrefix ?? Self.isJournal(environment: ProcessInfo.processInfo.environment)
    }

    private init(program: String, level: LogLevel, isSilent: Bool) {
        self.init(program: program, level: level, hasPriorityPrefix: false)
        self.isSilent = isSilent
    }

    package func error(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> LogFields = [:]) {
        write(.error, message, fields)
    }
    package func warning(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> LogFields = [:]) {
        write(.warning, message, fields)
    }
    package func info(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> LogFields = [:]) {
        write(.info, message, fields)
    }
    package func debug(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> LogFields = [:]) {
        write(.debug, message, fields)
    }

    /// Writes `<program>: <message>` to standard error, whatever the level (command-line errors).
    package static func printError(_ message: String, program: String) {
        writeLineToStandardError("\(program): \(message)\n")
    }

    /// Whether standard error is the journal: `$JOURNAL_STREAM` is `<device>:<inode>` of standard error
    /// (systemd.exec(5), "JOURNAL_STREAM"); a child that inherited the variable but writes elsewhere is not.
    package static func isJournal(environment: [String: String]) -> Bool {
        guard let value = environment["JOURNAL_STREAM"] else { return false }
        let parts = value.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        guard let identity = standardErrorFileIdentity() else { return false }
        return identity.device == device && identity.inode == inode
    }

    /// The line for one event, without the trailing newline (tests).
    package func line(
        _ lineLevel: LogLevel, _ message: String, fields: LogFields = [:], at time: Date = Date()
    ) -> String {
        let prefix = hasPriorityPrefix ? "<\(lineLevel.syslogPriority)>" : ""
        switch format {
        case .text:
            var text = "\(prefix)\(program): \(lineLevel.rawValue): \(message)"
            for (key, value) in fields.members { text += " \(key)=\(Self.text(value))" }
            return text
        case .json:
            var members: [String: JSONValue] = [
                "time": .string(time.rfc3339String), "level": .string(lineLevel.rawValue),
                "service": .string(program), "message": .string(message),
            ]
            for (key, value) in fields.members where members[key] == nil { members[key] = value }
            let json = (try? JSONWriter(sortsKeys: true).string(.object(members))) ?? "{}"
            return prefix + json
        }
    }

    private func write(_ lineLevel: LogLevel, _ message: () -> String, _ fields: () -> LogFields) {
        guard !isSilent, lineLevel <= level else { return }
        writeLineToStandardError(line(lineLevel, message(), fields: fields()) + "\n")
    }

    /// A field's value in a text line: strings as they are when they have no space, quoted otherwise.
    private static func text(_ value: JSONValue) -> String {
        if case .string(let string) = value, !string.isEmpty, !string.contains(where: { $0 == " " || $0 == "\"" }) {
            return string
        }
        return (try? JSONWriter().string(value)) ?? "null"
    }
}

/// The structured fields of one log line, in order: `["socket": .string(path), "txn": .int(12)]`.
package struct LogFields: Sendable, ExpressibleByDictionaryLiteral {
    package var members: [(String, JSONValue)]

    package init(dictionaryLiteral elements: (String, JSONValue)...) {
        members = elements
    }
}

/// How log lines are written (`--log-format`).
package enum LogFormat: String, Sendable, Equatable, CaseIterable {
    case text, json
}
