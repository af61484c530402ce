/// A command line a service cannot run with; the process exits with status 64 (`EX_USAGE`).
public enum ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    case unknownFlag(String)
    case missingValue(flag: String)
    case invalidValue(flag: String, value: String, expected: String)
    case unexpectedArgument(String)

    public var description: String {
        switch self {
        case .unknownFlag(let flag): return "unknown option '\(flag)' (see --help)"
        case .missingValue(let flag): return "\(flag) needs a value"
        case .invalidValue(let flag, let value, let expected): return "\(flag) '\(value)': expected \(expected)"
        case .unexpectedArgument(let argument): return "unexpected argument '\(argument)' (see --help)"
        }
    }

    /// `EX_USAGE` from sysexits.h.
    public static let exitStatus: Int32 = 64
}
