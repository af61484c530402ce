extension StoreServiceConfiguration {
    /// Reads the command line (without the program name).
    ///
    /// Flags take their value as the next argument or after `=` (`--socket=/tmp/s`).
    /// `--allow-uid` and `--allow-gid` may be repeated.
    ///
    /// - Throws: `ConfigurationError` naming the flag at fault.
    static func parse(
        arguments: [String], environment: [String: String], identity: Identity = .current
    ) throws(ConfigurationError) -> Outcome {
        var configuration = defaults(environment: environment, identity: identity)
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "-h" || argument == "--help" { return .help }
            guard argument.hasPrefix("--") else { throw .unexpectedArgument(argument) }
            var flag = argument
            var inlineValue: String?
            if let equals = argument.firstIndex(of: "=") {
                flag = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            func value() throws(ConfigurationError) -> String {
                if let inlineValue { return inlineValue }
                guard index < arguments.count else { throw .missingValue(flag: flag) }
                defer { index += 1 }
                return arguments[index]
            }
            switch flag {
            case "--socket": configuration.socketPath = try nonEmpty(value(), flag: flag)
            case "--database": configuration.databasePath = try nonEmpty(value(), flag: flag)
            case "--model": configuration.modelPath = try nonEmpty(value(), flag: flag)
            case "--max-frame": configuration.maxFrame = try integer(value(), flag: flag, atLeast: 64)
            case "--max-in-flight": configuration.maxInFlight = try integer(value(), flag: flag, atLeast: 1)
            case "--max-outbound": configuration.maxOutbound = try integer(value(), flag: flag, atLeast: 1024)
            case "--history": configuration.historyRetention = try integer(value(), flag: flag, atLeast: 1)
            case "--socket-mode": configuration.socketMode = try mode(value(), flag: flag)
            case "--allow-uid":
                let uid = try UInt32(integer(value(), flag: flag, atLeast: 0, atMost: Int(UInt32.max)))
                if !configuration.allowedUIDs.contains(uid) { configuration.allowedUIDs.append(uid) }
            case "--allow-gid":
                let gid = try UInt32(integer(value(), flag: flag, atLeast: 0, atMost: Int(UInt32.max)))
                if !configuration.allowedGIDs.contains(gid) { configuration.allowedGIDs.append(gid) }
            case "--log-level":
                let text = try value()
                guard let level = LogLevel(rawValue: text) else {
                    throw .invalidValue(
                        flag: flag, value: text,
                        expected: LogLevel.allCases.map(\.rawValue).joined(separator: ", "))
                }
                configuration.logLevel = level
            default: throw .unknownFlag(flag)
            }
        }
        return .run(configuration)
    }

    private static func nonEmpty(_ text: String, flag: String) throws(ConfigurationError) -> String {
        guard !text.isEmpty else { throw .invalidValue(flag: flag, value: text, expected: "a path") }
        return text
    }

    private static func integer(
        _ text: String, flag: String, atLeast minimum: Int, atMost maximum: Int = Int.max
    ) throws(ConfigurationError) -> Int {
        guard let number = Int(text), number >= minimum, number <= maximum else {
            let range = maximum == Int.max ? "an integer ≥ \(minimum)" : "an integer from \(minimum) to \(maximum)"
            throw .invalidValue(flag: flag, value: text, expected: range)
        }
        return number
    }

    private static func mode(_ text: String, flag: String) throws(ConfigurationError) -> UInt32 {
        let digits = text.hasPrefix("0o") ? String(text.dropFirst(2)) : text
        guard !digits.isEmpty, digits.count <= 4, let mode = UInt32(digits, radix: 8), mode <= 0o777 else {
            throw .invalidValue(flag: flag, value: text, expected: "an octal mode such as 0660")
        }
        return mode
    }
}

/// A command line `storesvc` cannot run with; the process exits with status 64 (`EX_USAGE`).
enum ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    case unknownFlag(String)
    case missingValue(flag: String)
    case invalidValue(flag: String, value: String, expected: String)
    case unexpectedArgument(String)

    var description: String {
        switch self {
        case .unknownFlag(let flag): return "unknown option '\(flag)' (see --help)"
        case .missingValue(let flag): return "\(flag) needs a value"
        case .invalidValue(let flag, let value, let expected): return "\(flag) '\(value)': expected \(expected)"
        case .unexpectedArgument(let argument): return "unexpected argument '\(argument)' (see --help)"
        }
    }

    /// `EX_USAGE` from sysexits.h.
    static let exitStatus: Int32 = 64
}
