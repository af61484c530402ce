/// A command line a service cannot run with; the process exits with status 64 (`EX_USAGE`).
package enum ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    case unknownFlag(String)
    case missingValue(flag: String)
    case invalidValue(flag: String, value: String, expected: String)
    case unexpectedArgument(String)

    package var description: String {
        switch self {
        case .unknownFlag(let flag): return "unknown option '\(flag)' (see --help)"
        case .missingValue(let flag): return "\(flag) needs a value"
        case .invalidValue(let flag, let value, let expected): return "\(flag) '\(value)': expected \(expected)"
        case .unexpectedArgument(let argument): return "unexpected argument '\(argument)' (see --help)"
        }
    }

    /// `EX_USAGE` from sysexits.h.
    package static let exitStatus: Int32 = 64
}
