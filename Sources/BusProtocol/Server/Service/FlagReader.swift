/// Reads a service's command line flag by flag: `--flag value` or `--flag=value`, `-h`/`--help`.
///
/// ```swift
/// var flags = FlagReader(arguments)
/// while let flag = try flags.next() {
///     switch flag {
///     case "--help": return .help
///     case "--socket": configuration.socketPath = try flags.path()
///     default: throw .unknownFlag(flag)
///     }
/// }
/// ```
package struct FlagReader: Sendable {
    private let arguments: [String]
    private var index = 0
    private var flag = ""
    private var inlineValue: String?

    /// `arguments` without the program name.
    package init(_ arguments: [String]) {
        self.arguments = arguments
    }

    /// The next flag's name (`--socket`; `-h` reads as `--help`), or `nil` at the end.
    ///
    /// - Throws: `.unexpectedArgument` for an argument that is not a flag.
    package mutating func next() throws(ConfigurationError) -> String? {
        guard index < arguments.count else { return nil }
        let argument = arguments[index]
        index += 1
        if argument == "-h" { return "--help" }
        guard argument.hasPrefix("--") else { throw .unexpectedArgument(argument) }
        if let equals = argument.firstIndex(of: "=") {
            flag = String(argument[..<equals])
            inlineValue = String(argument[argument.index(after: equals)...])
        } else {
            flag = argument
            inlineValue = nil
        }
        return flag
    }

    /// The current flag's value, after `=` or as the next argument.
    package mutating func value() throws(ConfigurationError) -> String {
        if let inlineValue { return inlineValue }
        guard index < arguments.count else { throw .missingValue(flag: flag) }
        defer { index += 1 }
        return arguments[index]
    }

    /// A value that must not be empty (`expected` names it in the error).
    package mutating func nonEmpty(expected: String = "a non-empty value") throws(ConfigurationError) -> String {
        let text = try value()
        guard !text.isEmpty else { throw invalid(text, expected: expected) }
        return text
    }

    /// An integer within `range`.
    package mutating func integer(in range: ClosedRange<Int>) throws(ConfigurationError) -> Int {
        let text = try value()
        guard let number = Int(text), range.contains(number) else {
            let expected =
                range.upperBound == Int.max
                ? "an integer ≥ \(range.lowerBound)" : "an integer from \(range.lowerBound) to \(range.upperBound)"
            throw invalid(text, expected: expected)
        }
        return number
    }

    /// A file mode in octal (`0660`, `660`, `0o660`), at most `0777`.
    package mutating func octalMode() throws(ConfigurationError) -> UInt32 {
        let text = try value()
        let digits = text.hasPrefix("0o") ? String(text.dropFirst(2)) : text
        guard !digits.isEmpty, digits.count <= 4, let mode = UInt32(digits, radix: 8), mode <= 0o777 else {
            throw invalid(text, expected: "an octal mode such as 0660")
        }
        return mode
    }

    /// One of `Choice`'s raw values, listed in the error.
    package mutating func choice<Choice: RawRepresentable & CaseIterable>(
        of type: Choice.Type = Choice.self, expected: String? = nil
    ) throws(ConfigurationError) -> Choice where Choice.RawValue == String {
        let text = try value()
        guard let choice = Choice(rawValue: text) else {
            throw invalid(text, expected: expected ?? Choice.allCases.map(\.rawValue).joined(separator: ", "))
        }
        return choice
    }

    /// The error for the current flag's `value`.
    package func invalid(_ value: String, expected: String) -> ConfigurationError {
        .invalidValue(flag: flag, value: value, expected: expected)
    }
}
