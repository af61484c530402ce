/// Makes help text in the style of swift-argument-parser: OVERVIEW, USAGE, ARGUMENTS, OPTIONS,
/// SUBCOMMANDS, wrapped at 100 columns with descriptions aligned at column 28.
struct HelpFormatter: Sendable {
    /// Where descriptions start.
    static let labelWidth = 26
    static let lineWidth = 100

    /// The help of one command; `path` is the words before its name (`ctxbus store`).
    func help(for configuration: CommandConfiguration, path: String) -> String {
        var sections: [String] = ["OVERVIEW: \(configuration.abstract)"]
        if !configuration.discussion.isEmpty { sections.append(wrapDiscussion(configuration.discussion)) }
        sections.append("USAGE: \(usage(for: configuration, path: path))")
        if !configuration.arguments.isEmpty {
            sections.append(
                "ARGUMENTS:\n" + configuration.arguments.map { entry("<\($0.name)>", $0.help) }.joined(separator: "\n"))
        }
        sections.append(
            "OPTIONS:\n" + configuration.allOptions.map { entry($0.label, $0.help) }.joined(separator: "\n"))
        if !configuration.examples.isEmpty {
            sections.append("EXAMPLES:\n" + configuration.examples.map { "  " + $0 }.joined(separator: "\n"))
        }
        return sections.joined(separator: "\n\n")
    }

    /// The usage line: `ctxbus store fetch <entity> [--where <predicate>] ...`.
    func usage(for configuration: CommandConfiguration, path: String) -> String {
        let words =
            ["\(path) \(configuration.name)"] + configuration.arguments.map(\.synopsis)
            + configuration.allOptions.filter { $0 != .help }.map(\.synopsis)
        return wrap(words, indent: 7 + path.count + configuration.name.count + 2)
    }

    /// The help of a group of commands.
    func help(for group: CommandGroup, path: String) -> String {
        var sections = ["OVERVIEW: \(group.abstract)"]
        if !group.discussion.isEmpty { sections.append(wrapDiscussion(group.discussion)) }
        sections.append("USAGE: \(path) \(group.name) <subcommand>")
        sections.append("OPTIONS:\n" + entry(OptionSpec.help.label, OptionSpec.help.help))
        sections.append(
            "SUBCOMMANDS:\n"
                + group.commands.map { entry($0.configuration.name, $0.configuration.abstract) }
                .joined(separator: "\n")
                + "\n\n  See '\(path) \(group.name) <subcommand> --help' for detailed help.")
        return sections.joined(separator: "\n\n")
    }

    /// `  label                   description` with the description wrapped and aligned.
    func entry(_ label: String, _ text: String) -> String {
        let indent = String(repeating: " ", count: Self.labelWidth + 2)
        let lines = wrapText(text, width: Self.lineWidth - indent.count)
        var first = "  " + label
        var rest = lines[...]
        if first.count < Self.labelWidth + 2 {
            first += String(repeating: " ", count: Self.labelWidth + 2 - first.count) + (rest.popFirst() ?? "")
        }
        return ([first] + rest.map { indent + $0 }).joined(separator: "\n")
    }

    /// Joins words with spaces, breaking lines before `lineWidth`, continuation lines indented.
    func wrap(_ words: [String], indent: Int) -> String {
        var lines: [String] = []
        var line = ""
        for word in words {
            if !line.isEmpty, line.count + 1 + word.count > Self.lineWidth - 7 {
                lines.append(line)
                line = String(repeating: " ", count: indent) + word
            } else {
                line += line.isEmpty ? word : " " + word
            }
        }
        lines.append(line)
        return lines.joined(separator: "\n")
    }

    /// Wraps the lines of a discussion at `lineWidth`; indented lines (tables) are kept as they are.
    func wrapDiscussion(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).flatMap { line in
            line.first == " " ? [String(line)] : wrapText(String(line), width: Self.lineWidth)
        }.joined(separator: "\n")
    }

    /// Splits `text` into lines of at most `width` characters at spaces (keeping explicit line breaks).
    func wrapText(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = ""
            for word in paragraph.split(separator: " ") {
                if !line.isEmpty, line.count + 1 + word.count > width {
                    lines.append(line)
                    line = String(word)
                } else {
                    line += line.isEmpty ? String(word) : " " + word
                }
            }
            lines.append(line)
        }
        return lines
    }
}
