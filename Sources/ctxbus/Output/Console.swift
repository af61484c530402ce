import ContextBusSupport

/// Where `ctxbus` writes: results to standard output (tables, or one JSON value per line),
/// messages and progress to standard error.
///
/// Every line is flushed at once, so a `watch` piped into another program is seen as it happens.
/// Progress is a single line on standard error that is redrawn in place, shown only when standard
/// error is a terminal; it is cleared before any other line is written and drawn again after it.
final class Console: Sendable {
    enum Format: Sendable, Hashable {
        case table, json
    }

    let format: Format
    /// Whether progress lines are drawn (standard error is a terminal).
    let showsProgress: Bool
    private let progressLine = Locked<String?>(nil)

    init(format: Format, showsProgress: Bool) {
        self.format = format
        self.showsProgress = showsProgress
    }

    /// A console for this process: progress only when standard error is a terminal.
    static func standard(format: Format) -> Console {
        Console(format: format, showsProgress: StandardStream.error.isTerminal)
    }

    var isJSON: Bool { format == .json }

    /// Writes one line to standard output.
    func line(_ text: String) {
        write(text + "\n", to: .output)
    }

    /// Writes lines to standard output.
    func lines(_ texts: [String]) {
        guard !texts.isEmpty else { return }
        write(texts.joined(separator: "\n") + "\n", to: .output)
    }

    /// Writes `value` as one line of compact JSON (keys sorted) to standard output.
    func json(_ value: JSONValue) {
        line((try? JSONWriter(sortsKeys: true).string(value)) ?? "null")
    }

    /// Writes `ctxbus: <text>` to standard error.
    func error(_ text: String) {
        write("ctxbus: \(text)\n", to: .error)
    }

    /// Writes a line to standard error as it is.
    func note(_ text: String) {
        write(text + "\n", to: .error)
    }

    /// Shows `text` as the progress line (when standard error is a terminal); `nil` removes it.
    func progress(_ text: String?) {
        guard showsProgress else { return }
        progressLine.withLock { line in
            guard text != nil || line != nil else { return }
            line = text
            StandardStream.error.write("\r\u{1B}[K" + (text ?? ""))
        }
    }

    private func write(_ text: String, to stream: StandardStream) {
        progressLine.withLock { progress in
            // The progress line is cleared first and drawn again after.
            if progress != nil { StandardStream.error.write("\r\u{1B}[K") }
            stream.write(text)
            if let progress { StandardStream.error.write(progress) }
        }
    }
}
