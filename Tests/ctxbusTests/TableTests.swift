import TestSupport
import Testing

@testable import ctxbus

struct TableTests {
    @Test func alignsColumnsTwoSpacesApartAndRightAlignsNumbers() {
        let table = Table(["id", "count", "name"], rows: [["Device/1", "7", "thermo"], ["Device/12", "120", "a"]])
        expectEqual(
            table.lines,
            [
                "id         count  name",
                "Device/1       7  thermo",
                "Device/12    120  a",
            ])
    }

    @Test func explicitAlignmentsOverrideTheDetection() {
        let table = Table(["value"], rows: [["57"], ["5a"]], alignments: [.left])
        expectEqual(table.lines, ["value", "57", "5a"])
        expectEqual(Table(["n"], rows: [["57"], ["-"], ["1000"]]).alignments, [.right])
    }

    @Test func aColumnWithTextIsLeftAligned() {
        expectEqual(Table(["v"], rows: [["1"], ["x"]]).alignments, [.left])
        expectEqual(Table(["v"], rows: [[""], ["-"]]).alignments, [.left])
    }

    @Test func hostileCellsStayOnOneLineAndAreCut() {
        let table = Table(["a", "b"], rows: [["line\nbreak\ttab\u{1B}[2J", String(repeating: "x", count: 100)]])
        let row = table.lines[1]
        expectTrue(!row.contains("\n") && !row.contains("\u{1B}") && !row.contains("\t"))
        expectTrue(row.hasPrefix("line break tab [2J"))
        expectTrue(row.hasSuffix(String(repeating: "x", count: Table.maximumCellWidth - 1) + "…"))
    }

    @Test func shortRowsGetEmptyCellsAndNoTrailingSpaces() {
        expectEqual(Table(["a", "b"], rows: [["1"]]).lines, ["a  b", "1"])
    }

    @Test func anEmptyTableIsItsHeader() {
        expectEqual(Table(["id", "version"]).lines, ["id  version"])
    }
}
