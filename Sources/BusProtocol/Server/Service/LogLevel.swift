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

    package static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rank < rhs.rank }
}
