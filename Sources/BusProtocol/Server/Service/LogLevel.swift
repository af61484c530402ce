/// How much a service writes to standard error (`--log-level`).
package enum LogLevel: String, Sendable, Equatable, CaseIterable, Comparable {
    case error, warning, info, debug

    private var rank: Int {
        switch self {
        case .error: return 0
        case .warning: return 1
        case .info: return 2
        case .debug: return 3
        }
    }

    /// The syslog priority of the level (`LOG_ERR` 3, `LOG_WARNING` 4, `LOG_INFO` 6, `LOG_DEBUG` 7), the `<N>`
    /// prefix of a line on the journal.
    package var syslogPriority: Int {
        switch self {
        case .error: return 3
        case .warning: return 4
        case .info: return 6
        case .debug: return 7
        }
    }

    package static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rank < rhs.rank }
}
