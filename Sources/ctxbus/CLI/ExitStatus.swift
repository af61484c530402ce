/// `ctxbus`'s exit statuses (documented in `ctxbus --help` and docs/cli.md).
enum ExitStatus: Int32, Sendable, CaseIterable {
    /// The command did what it was asked; a `watch` ended by Ctrl-C or SIGTERM.
    case success = 0
    /// The service answered with an error (a bad predicate, an unknown entity, a conflict, …).
    case serviceError = 1
    /// The service is not running or not reachable (or the connection was lost).
    case unreachable = 3
    /// `device run`: the chain failed (BlueZ or link error 502, timeout 408, cancelled 499).
    case chainFailed = 4
    /// A bad command line (unknown option, bad value, bad chain step, invalid JSON input); the
    /// services use the same status (EX_USAGE).
    case usage = 64
    /// `store model --diff`: the model file cannot be migrated to in place; storesvc would refuse it with the
    /// same status (EX_CONFIG).
    case migrationRefused = 78

    /// One line for the help text.
    var meaning: String {
        switch self {
        case .success: return "success (also a watch stopped by Ctrl-C or SIGTERM)"
        case .serviceError: return "the service answered with an error (bad predicate, unknown entity, conflict, ...)"
        case .unreachable: return "the service is not running or cannot be reached, or the connection was lost"
        case .chainFailed: return "device run: the chain failed (502 BlueZ/link, 408 timeout, 499 cancelled)"
        case .usage: return "usage error: bad command line, chain syntax or JSON input"
        case .migrationRefused: return "store model --diff: the model cannot be migrated to in place"
        }
    }
}
