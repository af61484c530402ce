/// Model names as Swift identifiers: a model name is ASCII letters, digits and `_` (`Model` checks it), so it is an
/// identifier once a keyword is escaped with backticks.
enum SwiftIdentifier {
    /// `name`, in backticks when it is a Swift keyword.
    static func escaped(_ name: String) -> String {
        keywords.contains(name) ? "`\(name)`" : name
    }

    /// `readings` → `Readings`: for method names made from a key (`addToReadings`).
    static func capitalized(_ name: String) -> String {
        name.prefix(1).uppercased() + name.dropFirst()
    }

    /// Type names a generated struct cannot take: the compiler's own meaning wins where the generated code uses
    /// them (`Self` in every declaration), or they name no type at all.
    static let unusableTypeNames: Set<String> = ["Self", "Any", "AnyObject", "Type", "Protocol"]

    /// Swift's keywords (The Swift Programming Language, "Lexical Structure"): reserved in declarations,
    /// statements, expressions and types.
    static let keywords: Set<String> = [
        "associatedtype", "borrowing", "class", "consuming", "deinit", "enum", "extension", "fileprivate", "func",
        "import", "init", "inout", "internal", "let", "nonisolated", "open", "operator", "package", "private",
        "precedencegroup", "protocol", "public", "rethrows", "static", "struct", "subscript", "typealias", "var",
        "break", "case", "catch", "continue", "default", "defer", "do", "else", "fallthrough", "for", "guard", "if",
        "in", "repeat", "return", "throw", "switch", "where", "while", "Any", "as", "await", "catch", "false", "is",
        "nil", "self", "Self", "super", "throws", "true", "try", "_",
    ]
}
