import ContextBus
import Foundation
import TestSupport
import Testing

/// The documentation's Swift cannot drift from the API: docs/from-core-data.md's "Core Data → ContextBus" table, row
/// by row, is code compiled in `CoreDataTableSnippets.swift`, and every block marked `<!-- compiled in FILE -->` in
/// README.md and docs/from-core-data.md is code of FILE (the manifest blocks: of the plugin fixture's Package.swift,
/// which scripts/plugin-check builds). The in-process snippets also run.
struct DocumentationSnippetTests {
    @Test func everyRowOfTheCoreDataTableIsCodeCompiledInTheSnippets() throws {
        let rows = try Self.tableRows(
            of: "docs/from-core-data.md", header: "| Core Data / ReactiveCocoa | ContextBus |")
        let snippets = try Self.read("Tests/DocumentationTests/CoreDataTableSnippets.swift")
        let regions = Self.rowRegions(snippets)
        expectEqual(rows.map(\.coreData), regions.map(\.row), "the table's rows and the snippets' `// row:` markers")
        for (row, region) in zip(rows, regions) where row.coreData == region.row {
            let code = Self.normalized(Self.removingComments(region.code))
            for span in Self.codeSpans(row.contextBus) where !code.contains(Self.normalized(span)) {
                Issue.record("row \(row.coreData): `\(span)` is not in its snippet")
            }
        }
        expectGreaterThan(rows.count, 30)
    }

    @Test func everyMarkedSwiftBlockIsCodeOfTheFileItNames() throws {
        var checked = 0
        for document in ["README.md", "docs/from-core-data.md"] {
            for block in try Self.markedBlocks(in: document) {
                let file = try Self.read(block.file)
                let code = Self.normalized(Self.removingComments(file))
                let text = Self.normalized(Self.removingComments(block.code))
                expectTrue(!text.isEmpty && code.contains(text), "\(document): a block is not code of \(block.file)")
                checked += 1
            }
        }
        expectGreaterThanOrEqual(checked, 4)
    }

    @Test func theInProcessSnippetsRunOnAnInMemoryStack() async throws {
        let scene = TableScene()
        expectEqual(CoreDataTableSnippets.properties(scene), 2)
        expectEqual(CoreDataTableSnippets.generatedTypes(scene), ["Device", "Reading", "Device"])
        let ids = try CoreDataTableSnippets.objectIDs(scene)
        expectEqual(ids.count, 3)
        expectFalse(ids[0].isTemporary)
        try CoreDataTableSnippets.perform(scene)
        expectEqual(try await CoreDataTableSnippets.performAsync(scene), 0)
        expectEqual(try CoreDataTableSnippets.fetchRequest(scene).count, 0)
        expectEqual(try CoreDataTableSnippets.idsAndCounts(scene).1, 0)
        expectNil(try CoreDataTableSnippets.find(scene))
        expectEqual(CoreDataTableSnippets.sortKeys().map(\.keyPath), ["time", "device.name"])
        expectEqual(try await CoreDataTableSnippets.first(CoreDataTableSnippets.signal()), [1, 1, 1])
        expectEqual(try CoreDataTableSnippets.chains(Signal(value: 4)).first().get(), 4)
        let recent = try scene.context.performAndWait {
            try TypedEntitySnippets.findInsertSaveFetch(in: scene.context).map { ($0.characteristic, $0.device?.name) }
        }
        expectEqual(recent.map(\.0), ["2a19"])
        expectEqual(recent.map(\.1), ["thermo"])
    }

    // MARK: - Reading the documents

    struct Row {
        var coreData: String
        var contextBus: String
    }

    /// The rows of the table whose header starts with `header`: its first cell and its second.
    static func tableRows(of document: String, header: String) throws -> [Row] {
        let lines = try read(document).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let start = lines.firstIndex(where: { $0.hasPrefix(header) }) else { return [] }
        return lines[(start + 2)...].prefix { $0.hasPrefix("|") }.map { line in
            let cells = line.dropFirst(2).components(separatedBy: " | ")
            return Row(coreData: cells[0], contextBus: cells.count > 1 ? cells[1] : "")
        }
    }

    /// Each `// row: …` marker of the snippets and the code up to the next marker.
    static func rowRegions(_ text: String) -> [(row: String, code: String)] {
        var regions: [(row: String, code: String)] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("// row: ") {
                regions.append((String(trimmed.dropFirst("// row: ".count)), ""))
            } else if !regions.isEmpty {
                regions[regions.count - 1].code += line + "\n"
            }
        }
        return regions
    }

    /// The Swift blocks that follow a `<!-- compiled in FILE -->` line, with their FILE.
    static func markedBlocks(in document: String) throws -> [(file: String, code: String)] {
        let lines = try read(document).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var blocks: [(file: String, code: String)] = []
        var index = 0
        while index < lines.count {
            let line = lines[index]
            index += 1
            guard line.hasPrefix("<!-- compiled in "), line.hasSuffix(" -->") else { continue }
            let file = String(line.dropFirst("<!-- compiled in ".count).dropLast(" -->".count))
            guard index < lines.count, lines[index] == "```swift" else { continue }
            index += 1
            var code = ""
            while index < lines.count, lines[index] != "```" {
                code += lines[index] + "\n"
                index += 1
            }
            blocks.append((file, code))
        }
        return blocks
    }

    /// The text of each `code span` of a Markdown cell.
    static func codeSpans(_ cell: String) -> [String] {
        cell.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }
            .map { String($0.element) }
    }

    /// `text` without `//` comments (outside string literals).
    static func removingComments(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> Substring in
            var inString = false
            var previous: Character = " "
            for index in line.indices {
                let character = line[index]
                if character == "\"" { inString.toggle() }
                if !inString, character == "/", previous == "/" { return line[..<line.index(before: index)] }
                previous = character
            }
            return line
        }.joined(separator: "\n")
    }

    /// Code compared without whitespace and without the trailing commas swift-format adds when it breaks a list.
    static func normalized(_ code: String) -> String {
        code.filter { !$0.isWhitespace }.replacingOccurrences(of: ",)", with: ")")
            .replacingOccurrences(of: ",]", with: "]")
    }

    static func read(_ path: String) throws -> String {
        try String(contentsOfFile: repositoryRoot + "/" + path, encoding: .utf8)
    }
}

/// The repository root (this file is `Tests/DocumentationTests/DocumentationSnippetTests.swift`).
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().path
