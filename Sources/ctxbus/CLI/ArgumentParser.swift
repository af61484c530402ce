/// Reads a command's words against its `CommandConfiguration`.
///
/// - `--name value` and `--name=value`; an option that takes a value takes the next word whatever
///   it looks like, so `--sort -time` works.
/// - `-h` style short names, for the options that have one.
/// - Options and positional words may be mixed; after `--`, every word is positional.
/// - `-` alone is a positional word (standard input, for `store save -`).
/// - `--help` / `-h` anywhere asks for help; nothing else is checked then.
struct ArgumentParser: Sendable {
    /// What the words asked for.
    enum Outcome: Sendable, Hashable {
        case help
        case arguments(ParsedArguments)
    }

    let configuration: CommandConfiguration

    init(_ configuration: CommandConfiguration) {
        self.configuration = configuration
    }

    /// Parses `words` (the words after the command's name).
    ///
    /// - Throws: `UsageError` for an unknown option, a missing value, a flag given a value, a
    ///   repeated single option, too many or too few positional words.
    func parse(_ words: [String]) throws(UsageError) -> Outcome {
        if asksForHelp(words) { return .help }
        let options = configuration.allOptions
        var parsed = ParsedArguments()
        var positionalWords: [String] = []
        var index = 0
        var onlyPositionals = false
        while index < words.count {
            let word = words[index]
            index += 1
            if onlyPositionals || word == "-" || !word.hasPrefix("-") {
                positionalWords.append(word)
                parsed.items.append(.positional(word))
                continue
            }
            if word == "--" {
                onlyPositionals = true
                continue
            }
            var name: Substring
            var inlineValue: String?
            if word.hasPrefix("--") {
                name = word.dropFirst(2)
                if let equals = name.firstIndex(of: "=") {
                    inlineValue = String(name[name.index(after: equals)...])
                    name = name[..<equals]
                }
            } else {
                name = word.dropFirst()
            }
            let option: OptionSpec? =
                word.hasPrefix("--")
                ? options.first { $0.long == name } : options.first { name.count == 1 && $0.short == name.first }
            guard let option else { throw .unknownOption(word) }
            if option.takesValue {
                let value: String
                if let inlineValue {
                    value = inlineValue
                } else {
                    guard index < words.count else { throw .missingValue(for: option.long) }
                    value = words[index]
                    index += 1
                }
                if !option.isRepeating, !parsed.values(option.long).isEmpty {
                    throw UsageError("'--\(option.long)' may be given only once")
                }
                parsed.items.append(.option(option.long, value: value))
            } else {
                guard inlineValue == nil else { throw UsageError("'--\(option.long)' takes no value") }
                parsed.items.append(.option(option.long, value: nil))
            }
        }
        parsed.positionals = try assign(positionalWords)
        return .arguments(parsed)
    }

    private func asksForHelp(_ words: [String]) -> Bool {
        for word in words {
            if word == "--" { return false }
            if word == "--help" || word == "-h" { return true }
        }
        return false
    }

    /// Gives each positional argument its words, in declaration order.
    private func assign(_ words: [String]) throws(UsageError) -> [String: [String]] {
        var remaining = words[...]
        var assigned: [String: [String]] = [:]
        for argument in configuration.arguments {
            if argument.isRepeating {
                assigned[argument.name] = Array(remaining)
                if remaining.isEmpty, !argument.isOptional { throw .missingArgument(argument.name) }
                remaining = []
            } else if let word = remaining.first {
                assigned[argument.name] = [word]
                remaining = remaining.dropFirst()
            } else if !argument.isOptional {
                throw .missingArgument(argument.name)
            }
        }
        if let extra = remaining.first { throw .unexpectedArgument(extra) }
        return assigned
    }
}
