import ContextBusCodeGeneration
import ContextBusObjectGraph
import Foundation
import TestSupport
import Testing

/// The generated files the repository commits are exactly what `EntityCodeGenerator` writes today, so they cannot
/// fall behind the generator or the model: the default model's types, which ship in `ContextBusObjectGraph`, and the
/// every-shape fixture the typed-entity tests compile. After a change to the generator or the default model,
/// `CTXBUS_WRITE_GENERATED_ENTITIES=1 swift test --filter CommittedEntitySourcesTests` rewrites them.
struct CommittedEntitySourcesTests {
    @Test func theDefaultModelsTypesInTheLibraryAreWhatTheGeneratorWrites() throws {
        let source = try EntityCodeGenerator(isInsideObjectGraph: true)
            .source(for: .deviceReadings, from: "Model.deviceReadings")
        try expectCommitted(source, at: "Sources/Shared/ObjectGraph/Entities/DefaultModelEntities.swift")
    }

    @Test func theEveryShapeFixturesTypesAreWhatTheGeneratorWritesFromItsModelFile() throws {
        let model = URL(fileURLWithPath: repositoryRoot + "/Tests/EntityFixtures/EveryShape.ctxmodel.json")
        let source = try EntityCodeGenerator().source(forModelAt: model)
        try expectCommitted(source, at: "Tests/EntityFixtures/EveryShape.swift")
    }

    /// Records an issue naming the first line that differs, unless the committed file holds `source` (or writes it,
    /// under `CTXBUS_WRITE_GENERATED_ENTITIES=1`).
    private func expectCommitted(
        _ source: String, at path: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let url = URL(fileURLWithPath: repositoryRoot + "/" + path)
        if ProcessInfo.processInfo.environment["CTXBUS_WRITE_GENERATED_ENTITIES"] == "1" {
            try Data(source.utf8).write(to: url, options: .atomic)
            return
        }
        let committed = (try? String(contentsOf: url, encoding: .utf8)) ?? ""
        guard committed != source else { return }
        let old = committed.split(separator: "\n", omittingEmptySubsequences: false)
        let new = source.split(separator: "\n", omittingEmptySubsequences: false)
        let line =
            zip(old, new).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(old.count, new.count)
        Issue.record(
            """
            \(path) is not what the generator writes: line \(line + 1) is \
            "\(line < old.count ? String(old[line]) : "<end>")", the generator writes \
            "\(line < new.count ? String(new[line]) : "<end>")". Regenerate with \
            CTXBUS_WRITE_GENERATED_ENTITIES=1 swift test --filter CommittedEntitySourcesTests
            """, sourceLocation: sourceLocation)
    }
}

/// The repository root (this file is `Tests/SharedTests/CodeGeneration/CommittedEntitySourcesTests.swift`).
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().path
