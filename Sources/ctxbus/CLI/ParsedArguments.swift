/// A command line read against a `CommandConfiguration`: option values, flags and positional
/// words, plus every item in its original order (for forms where order matters, like
/// `store save --insert Device name=x --insert Reading ...`).
struct ParsedArguments: Sendable, Hashable {
    /// One word of the command line, as the parser understood it.
    enum Item: Sendable, Hashable {
        /// An option and its value (`nil` for a flag).
        case option(String, value: String?)
        case positional(String)
    }

    /// Every option and positional word, in command-line order.
    var items: [Item] = []
    /// Positional words by argument name.
    var positionals: [String: [String]] = [:]

    /// Whether the flag `--long` was given.
    func flag(_ long: String) -> Bool {
        items.contains { $0 == .option(long, value: nil) }
    }

    /// Every value given to `--long`, in order.
    func values(_ long: String) -> [String] {
        items.compactMap { item in
            guard case .option(let name, let value?) = item, name == long else { return nil }
            return value
        }
    }

    /// The value of `--long` (the last one when it was given more than once).
    func value(_ long: String) -> String? { values(long).last }

    /// The words of the positional argument `name`.
    func positional(_ name: String) -> [String] { positionals[name] ?? [] }

    /// The first word of the positional argument `name`.
    func firstPositional(_ name: String) -> String? { positional(name).first }

    /// `--long` as an integer of at least `minimum`, if given.
    func integer(_ long: String, atLeast minimum: Int) throws(UsageError) -> Int? {
        guard let text = value(long) else { return nil }
        guard let number = Int(text), number >= minimum else {
            throw .invalidValue(text, for: long, expected: "an integer of at least \(minimum)")
        }
        return number
    }

    /// `--long` as one of `Choice`'s cases, named by its raw value (`--to-many faults`), if given.
    func choice<Choice: RawRepresentable & CaseIterable>(
        _ long: String, of _: Choice.Type = Choice.self
    )
        throws(UsageError) -> Choice?
    where Choice.RawValue == String {
        guard let text = value(long) else { return nil }
        guard let choice = Choice(rawValue: text) else {
            var names = Choice.allCases.map(\.rawValue)
            let last = names.removeLast()
            let expected = names.isEmpty ? last : names.joined(separator: ", ") + " or " + last
            throw .invalidValue(text, for: long, expected: expected)
        }
        return choice
    }

    /// `--long` as a number greater than `minimum`, if given.
    func number(_ long: String, above minimum: Double) throws(UsageError) -> Double? {
        guard let text = value(long) else { return nil }
        guard let number = Double(text), number.isFinite, number > minimum else {
            throw .invalidValue(text, for: long, expected: "a number above \(minimum)")
        }
        return number
    }
}
