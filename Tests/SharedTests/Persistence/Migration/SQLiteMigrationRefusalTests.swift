import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSQLite
@testable import ContextBusSupport

/// What cannot be migrated in place is refused with one line per difference, naming the entity and key, and the
/// file is left exactly as it was: no backup, the same rows, the same schema.
struct SQLiteMigrationRefusalTests {
    /// Opens the fixture with `model`, expecting a refusal; returns its differences after checking that nothing in
    /// the file changed.
    private func refusal(_ model: Model, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String] {
        let migration = try MigrationCase()
        defer { migration.cleanUp() }
        let before = try DatabaseDump.lines(of: migration.url)
        let error = storeError(sourceLocation: sourceLocation) { _ = try SQLiteStore(url: migration.url, model: model) }
        expectEqual(try DatabaseDump.lines(of: migration.url), before, sourceLocation: sourceLocation)
        expectFalse(FileManager.default.fileExists(atPath: migration.backupPath), sourceLocation: sourceLocation)
        // A dry run says the same.
        let plan = try SQLiteStore.migrationPlan(forDatabaseAt: migration.url, model: model)
        expectEqual(plan?.canMigrate, false, sourceLocation: sourceLocation)
        guard case .migrationRefused(let stored, let expected, let differences)? = error else {
            Issue.record("expected migrationRefused, got \(String(describing: error))", sourceLocation: sourceLocation)
            return []
        }
        expectEqual(stored, MigrationFixtures.sensors.versionHash, sourceLocation: sourceLocation)
        expectEqual(expected, model.versionHash, sourceLocation: sourceLocation)
        expectEqual(plan?.refusals.map(\.description), differences, sourceLocation: sourceLocation)
        return differences
    }

    @Test func aNarrowedTypeIsRefused() throws {
        let differences = try refusal(try MigrationCase.model { $0[1].attributes[10].type = .int })
        expectEqual(
            differences,
            ["Sensor.gain: cannot be migrated: type changed from double to int (only int to double can be migrated)"])
    }

    @Test func aRequiredAttributeWithoutADefaultIsRefused() throws {
        let differences = try refusal(
            try MigrationCase.model { $0[0].attributes.append(AttributeDescription("region", .string)) })
        expectEqual(
            differences,
            [
                "Site.region: cannot be migrated: a required attribute added without a default (existing objects would have no value)"
            ])
    }

    @Test func aUniqueKeyLiveObjectsCollideOnIsRefusedNamingThem() throws {
        let differences = try refusal(
            try MigrationCase.model { entities in
                entities[1].uniqueBy.append(["serial"])
                entities[1].uniqueBy.append(["kind", "active"])
            })
        expectEqual(
            differences,
            [
                "Sensor: cannot be migrated: uniqueBy [serial] added, but live objects share its values: Sensor/1, Sensor/2",
                "Sensor: cannot be migrated: uniqueBy [kind, active] added, but live objects share its values: Sensor/3, Sensor/5",
            ])
    }

    /// An attribute added with a default gives every existing object the same value: a unique key over it alone
    /// collides as soon as two objects exist.
    @Test func aUniqueKeyOverAnAddedDefaultCollidesOnceTwoObjectsTakeIt() throws {
        // One live Legacy takes the default alone; Tag's added optional rank is null everywhere, and nulls never
        // collide.
        let migration = try MigrationCase()
        defer { migration.cleanUp() }
        let fits = try MigrationCase.model { entities in
            entities[3].attributes.append(AttributeDescription("batch", .int, default: .int(1)))
            entities[3].uniqueBy = [["batch"]]
            entities[2].attributes.append(AttributeDescription("rank", .int, optional: true))
            entities[2].uniqueBy = [["rank"]]
        }
        try migration.migrate(to: fits) { store in expectEqual(store.migration?.canMigrate, true) }
        let differences = try refusal(
            try MigrationCase.model { entities in
                entities[2].attributes.append(AttributeDescription("rank", .int, default: .int(1)))
                entities[2].uniqueBy = [["rank"]]
            })
        expectEqual(
            differences,
            ["Tag: cannot be migrated: uniqueBy [rank] added, but live objects share its values: Tag/1, Tag/2, Tag/3"])
    }

    @Test func aRenamedFromThatNamesNothingStoredIsRefused() throws {
        let differences = try refusal(
            try MigrationCase.model { entities in
                entities[1].attributes[1] = AttributeDescription("reading", .int, renamedFrom: "levl")
                entities[3].name = "Archive"
                entities[3].renamedFrom = "Legacies"
            })
        expectEqual(
            differences,
            [
                "Sensor.reading: cannot be migrated: renamedFrom 'levl', which the stored model does not have",
                "Archive: cannot be migrated: renamedFrom 'Legacies', which the stored model does not have",
            ])
    }

    @Test func everyRefusedDifferenceIsNamedAtOnce() throws {
        let differences = try refusal(
            try MigrationCase.model { entities in
                entities[1].attributes[10].type = .string
                entities[1].attributes[9].defaultValue = .bool(false)
                entities[1].relationships[0].deleteRule = .cascade
                entities[0].relationships[0].deleteRule = .deny
            })
        expectEqual(differences.count, 4)
        expectTrue(
            differences.contains("Site.sensors: cannot be migrated: relationship changed: delete rule nullify → deny"))
    }
}
