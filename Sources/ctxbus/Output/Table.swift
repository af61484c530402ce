/// A table of text, printed with aligned columns: a header row, then one row per item, columns
/// separated by two spaces; numeric columns are right-aligned.
///
/// ```
/// id          version  characteristic  value
/// Reading/12        1  2a19            5a
/// ```
///
/// Cells are made safe for one line (control characters become spaces) and cut at
/// `maximumCellWidth` characters with `…`. Width is counted in `Character`s, which matches the
/// terminal for ASCII and most text (wide East Asian characters take two columns and are not
/// measured).
struct Table: Sendable, Hashable {
    enum Alignment: Sendable, Hashable {
        case left, right
    }

    static let maximumCellWidth = 48

    var titles: [String]
    var rows: [[String]]
    /// Each column's alignment; `nil` decides from the cells (`detectedAlignments`).
    var columnAlignments: [Alignment]?

    init(_ titles: [String], rows: [[String]] = [], alignments: [Alignment]? = nil) {
        self.titles = titles
        self.rows = rows
        self.columnAlignments = alignments
    }

    /// The given alignments, else right for a column whose every non-empty cell is a number.
    var alignments: [Alignment] {
        if let columnAlignments, columnAlignments.count == titles.count { return columnAlignments }
        return titles.indices.map { column in
            let cells = rows.map { column < $0.count ? $0[column] : "" }.filter { !$0.isEmpty && $0 != "-" }
            return !cells.isEmpty && cells.allSatisfy(Self.isNumber) ? .right : .left
        }
    }

    /// The header and the rows, aligned; trailing spaces removed.
    var lines: [String] {
        let cells = ([titles] + rows).map { row in
            titles.indices.map { column in Self.clean(column < row.count ? row[column] : "") }
        }
        let widths = titles.indices.map { column in cells.map { $0[column].count }.max() ?? 0 }
        let alignments = self.alignments
        return cells.enumerated().map { index, row in
            var line = ""
            for (column, cell) in row.enumerated() {
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                if column > 0 { line += "  " }
                line += alignments[column] == .right && index > 0 ? padding + cell : cell + padding
            }
            while line.last == " " { line.removeLast() }
            return line
        }
    }

    /// One line, no control characters, at most `maximumCellWidth` characters.
    static func clean(_ text: String) -> String {
        var cleaned = String(text.map { isControl($0) ? " " : $0 })
        if cleaned.count > maximumCellWidth {
            cleaned = String(cleaned.prefix(maximumCellWidth - 1)) + "…"
        }
        return cleaned
    }

    private static func isControl(_ character: Character) -> Bool {
        character.isNewline || character.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
    }

    static func isNumber(_ text: String) -> Bool {
        Double(text) != nil && text.first.map { $0.isNumber || $0 == "-" } == true
    }
}
