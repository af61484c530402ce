import Foundation
import TestSupport
import Testing

/// `ctxbus model swift`, run as a user would: the generated source of a model file (the same text the committed
/// every-shape fixture holds, which SharedTests checks against the generator), written to a file or printed, and a
/// clear error for a file it cannot read.
struct ModelSwiftCommandTests {
    private let fixture = repositoryRoot + "/Tests/EntityFixtures/EveryShape.ctxmodel.json"

    @Test func itPrintsTheTypesOfAModelFileAsTheGeneratorWritesThem() async throws {
        let printed = try await Ctxbus.run(["model", "swift", fixture])
        expectEqual(printed.status, 0, "\(printed.errors)")
        let committed = try String(
            contentsOfFile: repositoryRoot + "/Tests/EntityFixtures/EveryShape.swift", encoding: .utf8)
        expectEqual(printed.output, committed)
        expectEqual(printed.errors, "")
    }

    @Test func itWritesTheSourceToAFileWithTheAccessAskedFor() async throws {
        let directory = makeTestDirectory(prefix: "ctxbus-model-swift")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let output = directory + "/Generated.swift"
        let written = try await Ctxbus.run(["model", "swift", fixture, "--output", output, "--access", "internal"])
        expectEqual(written.status, 0, "\(written.errors)")
        expectEqual(written.output, "")
        let source = try String(contentsOfFile: output, encoding: .utf8)
        expectTrue(source.contains("\ninternal struct Sample: ManagedEntity {\n"), "\(source.prefix(600))")
        expectFalse(source.contains("public "))
    }

    @Test func aModelItCannotReadFailsWithUsageStatusNamingTheFileEntityAndKey() async throws {
        let directory = makeTestDirectory(prefix: "ctxbus-model-swift")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let model = directory + "/Garden.ctxmodel.json"
        try Data(#"{"entities":[{"name":"Plant","attributes":[{"name":"height","type":"float"}]}]}"#.utf8)
            .write(to: URL(fileURLWithPath: model))
        let invalid = try await Ctxbus.run(["model", "swift", model])
        expectEqual(invalid.status, 64)
        expectEqual(invalid.output, "")
        expectEqual(
            invalid.errors,
            "ctxbus: \(model): model: Plant.height: 'type' must be one of string, int, double, bool, date, binary, "
                + "uuid, json\n")
        let missing = try await Ctxbus.run(["model", "swift", directory + "/none.json"])
        expectEqual(missing.status, 64)
        expectTrue(missing.errors.hasPrefix("ctxbus: \(directory)/none.json: cannot be read"), "\(missing.errors)")
        let noArgument = try await Ctxbus.run(["model", "swift"])
        expectEqual(noArgument.status, 64)
        expectTrue(noArgument.errors.contains("missing <model>"), "\(noArgument.errors)")
    }
}
