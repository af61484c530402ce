/// Swift source being written, line by line, with four-space indentation.
struct SourceText {
    private(set) var string = ""
    private var depth = 0

    /// Appends `text` as one line at the current indentation.
    mutating func line(_ text: String) {
        string += String(repeating: " ", count: depth * 4) + text + "\n"
    }

    /// Appends an empty line.
    mutating func blank() {
        string += "\n"
    }

    /// Whether `text` fits on one line at the current indentation (120 columns, the repository's
    /// `.swift-format`).
    func fits(_ text: String) -> Bool {
        depth * 4 + text.count <= 120
    }

    /// The lines `body` writes, one level deeper.
    mutating func indented(_ body: (inout SourceText) -> Void) {
        depth += 1
        body(&self)
        depth -= 1
    }

    /// Appends `opening` (ending in `{`), the lines `body` writes one level deeper, and `}`.
    mutating func block(_ opening: String, _ body: (inout SourceText) -> Void) {
        line(opening)
        depth += 1
        body(&self)
        depth -= 1
        line("}")
    }
}
