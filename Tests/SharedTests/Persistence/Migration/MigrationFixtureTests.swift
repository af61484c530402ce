import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSQLite

/// The committed migration fixtures are what this version of the store writes: each is rebuilt and compared
/// (schema and every row), so a change to what the store writes fails here until the fixtures are rebuilt with
/// `scripts/make-migration-fixtures` (which runs this test with `CTXBUS_WRITE_MIGRATION_FIXTURES` set to the
/// fixtures' directory, and then writes them there instead of comparing).
struct MigrationFixtureTests {
    @Test func theCommittedFixturesAreWhatThisVersionWrites() throws {
        let directory = try TestStore.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        if let destination = ProcessInfo.processInfo.environment["CTXBUS_WRITE_MIGRATION_FIXTURES"] {
            try MigrationFixtures.writeSensors(into: URL(fileURLWithPath: destination))
            return
        }
        try MigrationFixtures.writeSensors(into: directory)
        let rebuilt = try DatabaseDump.lines(of: directory.appendingPathComponent("sensors-v1.sqlite"))
        // Read from a copy: a connection to the committed file would leave its WAL files in the source tree.
        let committed = try DatabaseDump.lines(
            of: try MigrationFixtures.copySensors(into: directory, as: "committed.sqlite"))
        expectEqual(rebuilt.count, committed.count)
        for (line, expected) in zip(rebuilt, committed) where line != expected {
            Issue.record("rebuilt: \(line)\ncommitted: \(expected)\n(run scripts/make-migration-fixtures)")
        }
        expectEqual(
            try Data(contentsOf: directory.appendingPathComponent("sensors-v1.json")),
            try Data(contentsOf: MigrationFixtures.sensorsModelFile))
        // The committed model file is the fixture's model.
        expectEqual(try Model(contentsOf: MigrationFixtures.sensorsModelFile), MigrationFixtures.sensors)
    }
}
