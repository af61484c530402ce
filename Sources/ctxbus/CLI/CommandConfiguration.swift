/// What a command is called, what it takes and how its help reads: the declaration the argument
/// parser reads and the help text is made from.
///
/// ```swift
/// static let configuration = CommandConfiguration(
///     name: "fetch", abstract: "Fetch objects of one entity.",
///     arguments: [ArgumentSpec("entity", help: "The entity, e.g. Reading.")],
///     options: [.value("limit", valueName: "n", help: "At most n objects.")],
///     service: .store)
/// ```
struct CommandConfiguration: Sendable {
    /// The word that selects the command (`fetch`).
    var name: String
    /// One line: what the command does.
    var abstract: String
    /// Paragraphs printed under the overview.
    var discussion: String = ""
    /// Positional arguments, in order.
    var arguments: [ArgumentSpec] = []
    /// The command's own options; `--json`, `--socket` and `--help` are added by the tool.
    var options: [OptionSpec] = []
    /// The service the command talks to; it gets a `--socket` option for it.
    var service: ServiceKind?
    /// Whether the command streams until interrupted: SIGINT/SIGTERM end it normally (exit 0)
    /// instead of ending the process with 128 + the signal's number.
    var streamsUntilInterrupted = false
    /// Example invocations, printed under EXAMPLES.
    var examples: [String] = []

    /// The options the command accepts, with the common ones added.
    var allOptions: [OptionSpec] {
        var all = options
        if let service {
            all.append(
                .value(
                    "socket", valueName: "path",
                    help: "The \(service.executable) socket (default: $\(service.socketVariable), else "
                        + "$CTXBUS_RUNTIME_DIR/\(service.socketFileName)).")
            )
        }
        all.append(.flag("json", help: "Print JSON instead of tables: one JSON value per line."))
        all.append(.help)
        return all
    }
}

/// A positional argument: `<entity>`, `<id> ...`.
struct ArgumentSpec: Sendable, Hashable {
    var name: String
    var help: String
    /// Takes every remaining positional word.
    var isRepeating = false
    var isOptional = false

    init(_ name: String, help: String, isRepeating: Bool = false, isOptional: Bool = false) {
        self.name = name
        self.help = help
        self.isRepeating = isRepeating
        self.isOptional = isOptional
    }

    /// `<entity>`, `<id> ...`, `[<entity>]`.
    var synopsis: String {
        let word = "<\(name)>" + (isRepeating ? " ..." : "")
        return isOptional ? "[\(word)]" : word
    }
}

/// A named option: a flag (`--count`) or one taking a value (`--limit <n>`), possibly repeated.
struct OptionSpec: Sendable, Hashable {
    enum Kind: Sendable, Hashable {
        case flag
        case value(name: String, isRepeating: Bool)
    }

    /// The long name without dashes (`limit`).
    var long: String
    var short: Character?
    var kind: Kind
    var help: String

    static func flag(_ long: String, short: Character? = nil, help: String) -> OptionSpec {
        OptionSpec(long: long, short: short, kind: .flag, help: help)
    }

    static func value(_ long: String, short: Character? = nil, valueName: String, help: String) -> OptionSpec {
        OptionSpec(long: long, short: short, kind: .value(name: valueName, isRepeating: false), help: help)
    }

    static func repeating(_ long: String, short: Character? = nil, valueName: String, help: String) -> OptionSpec {
        OptionSpec(long: long, short: short, kind: .value(name: valueName, isRepeating: true), help: help)
    }

    /// `-h, --help`.
    static let help = OptionSpec.flag("help", short: "h", help: "Show help information.")

    var takesValue: Bool {
        if case .value = kind { return true }
        return false
    }

    var isRepeating: Bool {
        if case .value(_, let repeating) = kind { return repeating }
        return false
    }

    /// `--limit <n>`, `-h, --help`, `--arg <name=value> ...`.
    var label: String {
        var text = short.map { "-\($0), " } ?? ""
        text += "--\(long)"
        if case .value(let name, let repeating) = kind { text += " <\(name)>" + (repeating ? " ..." : "") }
        return text
    }

    /// The option as it appears in a usage line: `[--limit <n>]`.
    var synopsis: String {
        var text = "--\(long)"
        if case .value(let name, let repeating) = kind { text += " <\(name)>" + (repeating ? " ..." : "") }
        return "[\(text)]"
    }
}
