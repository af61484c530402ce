extension DeviceServiceConfiguration {
    /// Reads the command line (without the program name).
    ///
    /// Flags take their value as the next argument or after `=` (`--socket=/tmp/s`).
    ///
    /// - Throws: `ConfigurationError` naming the flag at fault.
    static func parse(arguments: [String], environment: [String: String]) throws(ConfigurationError) -> Outcome {
        var configuration = defaults(environment: environment)
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
            case "--store": configuration.storeSocketPath = try nonEmpty(value(), flag: flag)
            case "--bus": configuration.busAddress = try nonEmpty(value(), flag: flag)
            case "--adapter": configuration.chains.adapter = try adapterName(value(), flag: flag)
            case "--max-concurrent":
                configuration.chains.maxConcurrent = try integer(value(), flag: flag, atLeast: 1, atMost: 1024)
            case "--serialize":
                let text = try value()
                guard let mode = ChainSettings.Serialization(rawValue: text) else {
                    throw .invalidValue(flag: flag, value: text, expected: "device or global")
                }
                configuration.chains.serialization = mode
            case "--retry":
                configuration.chains.retry.retries = try integer(value(), flag: flag, atLeast: 0, atMost: 100)
            case "--retry-delay-ms":
                configuration.chains.retry.initialDelay = .milliseconds(try integer(value(), flag: flag, atLeast: 1))
            case "--step-timeout-ms":
                configuration.chains.stepTimeout = .milliseconds(try integer(value(), flag: flag, atLeast: 1))
            case "--chain-timeout-ms":
                configuration.chains.chainTimeout = .milliseconds(try integer(value(), flag: flag, atLeast: 1))
            case "--resolve-timeout-ms":
                configuration.resolveTimeout = .milliseconds(try integer(value(), flag: flag, atLeast: 1))
            case "--log-level":
                let text = try value()
                guard let level = LogLevel(rawValue: text) else {
                    throw .invalidValue(
                        flag: flag, value: text, expected: LogLevel.allCases.map(\.rawValue).joined(separator: ", "))
                }
                configuration.logLevel = level
            default: throw .unknownFlag(flag)
            }
        }
        return .run(configuration)
    }

    private static func nonEmpty(_ text: String, flag: String) throws(ConfigurationError) -> String {
        guard !text.isEmpty else { throw .invalidValue(flag: flag, value: text, expected: "a non-empty value") }
        return text
    }

    /// An adapter name is one object path element (`hci0`): it becomes part of BlueZ object paths.
    private static func adapterName(_ text: String, flag: String) throws(ConfigurationError) -> String {
        guard !text.isEmpty, text.utf8.allSatisfy(DBusNames.isElementCharacter) else {
            throw .invalidValue(flag: flag, value: text, expected: "an adapter name such as hci0")
        }
        return text
    }

    private static func integer(
        _ text: String, flag: String, atLeast minimum: Int, atMost maximum: Int = 86_400_000
    ) throws(ConfigurationError) -> Int {
        guard let number = Int(text), number >= minimum, number <= maximum else {
            throw .invalidValue(flag: flag, value: text, expected: "an integer from \(minimum) to \(maximum)")
        }
        return number
    }
}
