import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSQLite
@testable import ContextBusSupport

/// The history keeps working across migrations: rows written under an earlier model read under the current
/// names, with removed entities and keys left out (docs/decisions/history-across-model-versions.md).
struct SQLiteMigrationHistoryTests {
    /// Sensor renamed Probe, its level renamed reading, its note removed; Legacy removed.
    private static let renamed = try! MigrationCase.model { entities in
        entities[1].name = "Probe"
        entities[1].renamedFrom = "Sensor"
        entities[1].attributes[1] = AttributeDescription("reading", .int, renamedFrom: "level")
        entities[1].attributes.remove(at: 2)
        entities[0].relationships[0].destination = "Probe"
        entities[2].relationships[0].destination = "Probe"
        entities.remove(at: 3)
    }

    /// A change set of the fixture as the renamed model reads it.
    private static func translated(_ change: ChangeSet, keys: [String: String], removing: Set<String>) -> ChangeSet {
        func object(_ snapshot: ObjectSnapshot) -> ObjectSnapshot? {
            guard snapshot.id.entity != "Legacy" else { return nil }
            let isSensor = snapshot.id.entity == "Sensor"
            return snapshot.migrated(
                entities: ["Sensor": "Probe"], keys: isSensor ? keys : [:], removing: isSensor ? removing : [])
        }
        var result = change
        result.inserted = change.inserted.compactMap(object)
        result.deleted = change.deleted.compactMap(object)
        result.updated = change.updated.compactMap { update in
            guard let snapshot = object(update.snapshot) else { return nil }
            let isSensor = update.snapshot.id.entity == "Sensor"
            let changed = Set(
                update.changedKeys.filter { !isSensor || !removing.contains($0) }.map { isSensor ? keys[$0] ?? $0 : $0 }
            )
            guard !changed.isEmpty else { return nil }
            let previous = ObjectSnapshot(id: update.snapshot.id, version: 0, values: update.previousValues).migrated(
                entities: ["Sensor": "Probe"], keys: isSensor ? keys : [:], removing: isSensor ? removing : [])
            return ChangeSet.Update(snapshot: snapshot, changedKeys: changed, previousValues: previous.values)
        }
        return result
    }

    @Test func historyAcrossARenameAndARemovalReadsUnderTheCurrentNames() throws {
        let migration = try MigrationCase()
        defer { migration.cleanUp() }
        try migration.migrate(to: Self.renamed) { store in
            let history = try store.history(since: 0, limit: 100)
            expectEqual(history.map(\.txn), Array(1...8))
            let expected = migration.historyBefore.map {
                Self.translated($0, keys: ["level": "reading"], removing: ["note"])
            }
            for (row, wanted) in zip(history, expected) { expectEqual(row, wanted, "txn \(row.txn)") }
            // The transactions that changed only Legacy are still there, empty.
            expectTrue(history[2].isEmpty)
            expectTrue(history[6].isEmpty)
            // Sensor/2's update of level and note is an update of reading alone.
            let update = try #require(history[3].updated.first { $0.snapshot.id == oid("Probe", 2) })
            expectEqual(update.changedKeys, ["reading"])
            expectEqual(update.previousValues, ["reading": .int(5)])
        }
    }

    @Test func historyAcrossTwoMigrationsReadsEachEraUnderTheCurrentNames() throws {
        let migration = try MigrationCase()
        defer { migration.cleanUp() }
        let probe = try migration.migrate(to: Self.renamed) { store in
            try store.insert("Probe", ["name": .string("theta"), "reading": .int(11)])
        }
        var entities = Self.renamed.entities
        entities[1].attributes[1] = AttributeDescription("value", .double, renamedFrom: "reading")
        entities[1].attributes.removeAll { $0.name == "serial" }
        let third = try Model(entities: entities)
        try migration.migrate(to: third) { store in
            expectEqual(store.previousModelVersions, [MigrationFixtures.sensors.versionHash, Self.renamed.versionHash])
            let history = try store.history(since: 0, limit: 100)
            expectEqual(history.map(\.txn), Array(1...9))
            let expected = migration.historyBefore.map { change in
                var row = Self.translated(change, keys: ["level": "value"], removing: ["note", "serial"])
                // Widened: the int values of the rows read as doubles.
                func widen(_ values: inout [String: PropertyValue]) {
                    if case .int(let number)? = values["value"] { values["value"] = .double(Double(number)) }
                }
                for i in row.inserted.indices { widen(&row.inserted[i].values) }
                for i in row.deleted.indices { widen(&row.deleted[i].values) }
                for i in row.updated.indices {
                    widen(&row.updated[i].snapshot.values)
                    widen(&row.updated[i].previousValues)
                }
                return row
            }
            for (row, wanted) in zip(history, expected) { expectEqual(row, wanted, "txn \(row.txn)") }
            let inserted = try #require(history.last?.inserted.first)
            expectEqual(inserted.id, probe)
            expectEqual(inserted.values["value"], .double(11))
            expectNil(inserted.values["serial"])
        }
    }

    @Test func aTranslationFollowsANameThroughEveryLaterMigration() throws {
        var first = PreviousModelVersion(version: "a", lastTxn: 10)
        first.renamedEntities = ["Sensor": "Probe"]
        first.renamedKeys = ["Sensor": ["level": "reading"]]
        first.removedKeys = ["Sensor": ["note"]]
        first.removedEntities = ["Legacy"]
        var second = PreviousModelVersion(version: "b", lastTxn: 20)
        second.renamedKeys = ["Probe": ["reading": "value"]]
        // An entity added under the removed one's name, in the second model, is not the one removed in the first.
        second.removedKeys = ["Legacy": ["payload"]]
        let translation = HistoryTranslation(previousVersions: [first, second])
        expectNil(translation.era(ofTxn: 21))
        let old = try #require(translation.era(ofTxn: 3))
        let sensor = try #require(old.entity("Sensor") ?? nil)
        expectEqual(sensor.name, "Probe")
        expectEqual(sensor.key("level"), "value")
        expectNil(sensor.key("note"))
        expectEqual(sensor.key("serial"), "serial")
        let removed: HistoryTranslation.Entity?? = old.entity("Legacy")
        expectTrue(removed == .some(nil))
        let untouched: HistoryTranslation.Entity?? = old.entity("Site")
        expectTrue(untouched == nil)
        let middle = try #require(translation.era(ofTxn: 11))
        let probe: HistoryTranslation.Entity?? = middle.entity("Probe")
        expectEqual(probe, HistoryTranslation.Entity(name: "Probe", renamedKeys: ["reading": "value"]))
        let legacy: HistoryTranslation.Entity?? = middle.entity("Legacy")
        expectEqual(legacy, HistoryTranslation.Entity(name: "Legacy", removedKeys: ["payload"]))
        // And the list round-trips through its metadata text.
        expectEqual(PreviousModelVersion.list(from: PreviousModelVersion.text(of: [first, second])), [first, second])
    }
}
