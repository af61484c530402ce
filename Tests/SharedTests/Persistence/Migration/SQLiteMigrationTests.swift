import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSQLite
@testable import ContextBusSupport

/// Each kind of change PROTOCOL.md lists, on the committed fixture database (`MigrationFixtures`): every object's
/// values after the migration are the values before, changed as the new model says; the schema is the one a new
/// database of the new model has; the file was backed up first.
struct SQLiteMigrationTests {
    private static let date = PropertyValue.date(Date(rfc3339: "2026-06-01T12:00:00.125Z")!)

    @Test func addingAttributesGivesExistingObjectsNullOrTheDefaultOfEveryType() throws {
        let migration = try MigrationCase()
        defer { migration.cleanUp() }
        let defaults: [(String, AttributeType, PropertyValue)] = [
            ("scale", .int, .int(-7)), ("ratio", .double, .double(0.1)), ("flag", .bool, .bool(true)),
            ("since", .date, Self.date), ("blob", .binary, .binary(Data([0, 255, 39]))),
            ("token", .uuid, .uuid(UUID(uuidString: "00000000-0000-0000-0000-0000000000AB")!)),
            ("meta", .json, .json(.object(["a": .array([.int(1), .null])]))),
            ("motto", .string, .string("it's \"ok\"")),
        ]
        let model = try MigrationCase.model { entities in
            entities[1].attributes.append(AttributeDescription("unit", .string, optional: true, indexed: true))
            for (name, type, value) in defaults {
                entities[1].attributes.append(AttributeDescription(name, type, default: value))
            }
        }
        try migration.migrate(to: model) { store in
            try migration.expectObjects(
                of: store,
                migration.expected { snapshot in
                    snapshot.migrated { values in
                        guard snapshot.id.entity == "Sensor" else { return }
                        values["unit"] = .null
                        for (name, _, value) in defaults { values[name] = value }
                    }
                })
            // A new object takes the defaults as before.
            let id = try store.insert("Sensor", ["name": .string("new"), "level": .int(1)])
            expectEqual(try store.snapshot(id)?.values["meta"], defaults[6].2)
            expectEqual(store.migration?.steps.count, 9)
        }
        try expectSchemaOfANewDatabase(at: migration.url, of: model)
    }

    @Test func removingAnEntityAnAttributeAndAManyToManyPairDropsThemAndKeepsTheRest() throws {
        let migration = try MigrationCase()
        defer { migration.cleanUp() }
        let model = try MigrationCase.model { entities in
            entities[1].attributes.removeAll { $0.name == "note" || $0.name == "kind" }
            entities[1].relationships.removeAll { $0.name == "tags" }
            entities[2].relationships = []
            entities.remove(at: 3)
        }
        try migration.migrate(to: model) { store in
            try migration.expectObjects(
                of: store,
                migration.expected { snapshot in
                    guard snapshot.id.entity != "Legacy" else { return nil }
                    return snapshot.migrated(
                        removing: snapshot.id.entity == "Tag" ? ["sensors"] : ["note", "kind", "tags"])
                })
            expectEqual(
                storeError { _ = try store.fetch(FetchRequest(entity: "Legacy")) },
                .invalidRequest(field: "entity", message: "unknown entity 'Legacy'"))
        }
        try expectSchemaOfANewDatabase(at: migration.url, of: model)
    }

    @Test func renamingAnEntityKeepsEachObjectsNumberAndNewObjectsNumberOn() throws {
        let migration = try MigrationCase()
        defer { migration.cleanUp() }
        let model = try MigrationCase.model { entities in
            entities[1].name = "Probe"
            entities[1].renamedFrom = "Sensor"
            entities[0].relationships[0].destination = "Probe"
            entities[2].relationships[0].destination = "Probe"
        }
        try migration.migrate(to: model) { store in
            try migration.expectObjects(of: store, migration.expected { $0.migrated(entities: ["Sensor": "Probe"]) })
            let id = try store.insert("Probe", ["name": .string("theta"), "level": .int(2)])
            expectEqual(id, ObjectID(entity: "Probe", number: 8))
            // The unique key still holds.
            let duplicate = storeError { try store.insert("Probe", ["name": .string("alpha"), "level": .int(2)]) }
            guard case .conflict? = duplicate else {
                Issue.record("expected a conflict, got \(String(describing: duplicate))")
                return
            }
        }
        try expectSchemaOfANewDatabase(at: migration.url, of: model)
    }

    /// `Z_M2M_Sensor_tags` is named by `Sensor.tags`; with `Tag` renamed `Badge`, `Badge.sensors` sorts first and
    /// names it: the rows move into `Z_M2M_Badge_sensors` with their two columns swapped.
    @Test func renamingAnEntitySoThatTheOtherSideNamesTheJoinTableKeepsTheMembers() throws {
        let migration = try MigrationCase()
        defer { migration.cleanUp() }
        let model = try MigrationCase.model { entities in
            entities[2].name = "Badge"
            entities[2].renamedFrom = "Tag"
            entities[1].relationships[1].destination = "Badge"
        }
        try migration.migrate(to: model) { store in
            try migration.expectObjects(of: store, migration.expected { $0.migrated(entities: ["Tag": "Badge"]) })
            try store.commit(
                SaveRequest(
                    updates: [
                        .init(
                            id: oid("Sensor", 4), version: nil,
                            values: ["tags": .references([oid("Badge", 1), oid("Badge", 2)])])
                    ]))
            expectEqual(
                try store.snapshot(oid("Badge", 1))?.values["sensors"],
                .references([oid("Sensor", 1), oid("Sensor", 2), oid("Sensor", 4)]))
        }
        try expectSchemaOfANewDatabase(at: migration.url, of: model)
    }

    @Test func renamingAttributesKeepsTheirValuesAndTheirIndexesAndUniqueKeys() throws {
        let migration = try MigrationCase()
        defer { migration.cleanUp() }
        let model = try MigrationCase.model { entities in
            entities[1].attributes[0] = AttributeDescription("label", .string, indexed: true, renamedFrom: "name")
            entities[1].attributes[1] = AttributeDescription("reading", .int, renamedFrom: "level")
            entities[1].uniqueBy = [["label"]]
            entities[0].attributes[1] = AttributeDescription(
                "shortCode", .string, optional: true, indexed: true, renamedFrom: "code")
        }
        try migration.migrate(to: model) { store in
            try migration.expectObjects(
                of: store,
                migration.expected { snapshot in
                    snapshot.migrated(keys: ["name": "label", "level": "reading", "code": "shortCode"])
                })
            let found = try store.fetch(
                FetchRequest(entity: "Sensor", predicate: try ObjectPredicate(format: "label == 'gamma'")))
            guard case .objects(let objects) = found.content else { return }
            expectEqual(objects.map(\.id), [oid("Sensor", 3)])
            expectNotNil(storeError { try store.insert("Sensor", ["label": .string("beta"), "reading": .int(1)]) })
        }
        try expectSchemaOfANewDatabase(at: migration.url, of: model)
    }

    @Test func wideningAnIntToADoubleRebuildsTheTableWithEveryValueAndIndex() throws {
        let migration = try MigrationCase()
        defer { migration.cleanUp() }
        let model = try MigrationCase.model { entities in
            entities[1].attributes[1].type = .double
            // Changes the rebuild makes in the same copy: a rename, a removal, an addition with a default.
            entities[1].attributes[2] = AttributeDescription("remark", .string, optional: true, renamedFrom: "note")
            entities[1].attributes.removeAll { $0.name == "raw" }
            entities[1].attributes.append(AttributeDescription("unit", .string, default: .string("°C")))
        }
        try migration.migrate(to: model) { store in
            try migration.expectObjects(
                of: store,
                migration.expected { snapshot in
                    guard snapshot.id.entity == "Sensor" else { return snapshot }
                    return snapshot.migrated(keys: ["note": "remark"], removing: ["raw"]) { values in
                        if case .int(let level)? = values["level"] { values["level"] = .double(Double(level)) }
                        values["unit"] = .string("°C")
                    }
                })
            try store.commit(
                SaveRequest(updates: [.init(id: oid("Sensor", 1), version: nil, values: ["level": .double(2.5)])]))
            expectEqual(try store.snapshot(oid("Sensor", 1))?.values["level"], .double(2.5))
        }
        try expectSchemaOfANewDatabase(at: migration.url, of: model)
    }

    @Test func indexesAndOptionalityChangeAndANullMadeRequiredTakesTheDefault() throws {
        let migration = try MigrationCase()
        defer { migration.cleanUp() }
        let model = try MigrationCase.model { entities in
            entities[0].attributes[0].isOptional = true
            entities[0].attributes[1].isIndexed = false
            entities[1].attributes[2].isOptional = false
            entities[1].attributes[2].defaultValue = .string("none")
            entities[1].attributes[3].isIndexed = true
            entities[1].attributes[4].isIndexed = false
        }
        try migration.migrate(to: model) { store in
            try migration.expectObjects(
                of: store,
                migration.expected { snapshot in
                    snapshot.migrated { values in
                        if snapshot.id.entity == "Sensor", values["note"] == .null { values["note"] = .string("none") }
                    }
                })
        }
        try expectSchemaOfANewDatabase(at: migration.url, of: model)
    }

    @Test func relationshipsAddedWithTheirInversesStartEmpty() throws {
        let migration = try MigrationCase()
        defer { migration.cleanUp() }
        let model = try MigrationCase.model { entities in
            entities[1].relationships.append(RelationshipDescription("spareAt", destination: "Site", inverse: "spares"))
            entities[0].relationships.append(
                RelationshipDescription("spares", destination: "Sensor", toMany: true, inverse: "spareAt"))
            entities[0].relationships.append(
                RelationshipDescription("tags", destination: "Tag", toMany: true, inverse: "sites"))
            entities[2].relationships.append(
                RelationshipDescription("sites", destination: "Site", toMany: true, inverse: "tags"))
            entities.append(
                EntityDescription(
                    name: "Visit", attributes: [AttributeDescription("at", .date)],
                    relationships: [RelationshipDescription("site", destination: "Site", inverse: "visits")]))
            entities[0].relationships.append(
                RelationshipDescription("visits", destination: "Visit", toMany: true, inverse: "site"))
        }
        try migration.migrate(to: model) { store in
            try migration.expectObjects(
                of: store,
                migration.expected { snapshot in
                    snapshot.migrated { values in
                        switch snapshot.id.entity {
                        case "Sensor": values["spareAt"] = .null
                        case "Site":
                            values["spares"] = .references([])
                            values["tags"] = .references([])
                            values["visits"] = .references([])
                        case "Tag": values["sites"] = .references([])
                        default: break
                        }
                    }
                })
            try store.commit(
                SaveRequest(
                    inserts: [
                        .init(entity: "Visit", ref: "v", values: ["at": Self.date, "site": .reference(oid("Site", 1))])
                    ],
                    updates: [
                        .init(id: oid("Sensor", 2), version: nil, values: ["spareAt": .reference(oid("Site", 3))]),
                        .init(id: oid("Site", 1), version: nil, values: ["tags": .references([oid("Tag", 2)])]),
                    ]))
            expectEqual(try store.snapshot(oid("Site", 3))?.values["spares"], .references([oid("Sensor", 2)]))
            expectEqual(try store.snapshot(oid("Tag", 2))?.values["sites"], .references([oid("Site", 1)]))
            expectEqual(try store.snapshot(oid("Site", 1))?.values["visits"], .references([oid("Visit", 1)]))
        }
        try expectSchemaOfANewDatabase(at: migration.url, of: model)
    }

    @Test func aUniqueKeyNoLiveObjectsCollideOnIsAddedAndThenHolds() throws {
        let migration = try MigrationCase()
        defer { migration.cleanUp() }
        let model = try MigrationCase.model { entities in
            entities[1].uniqueBy.append(["uid"])
            entities[2].uniqueBy = [["label"]]
        }
        try migration.migrate(to: model) { store in
            try migration.expectObjects(of: store, migration.expected { $0 })
            expectNotNil(storeError { try store.insert("Tag", ["label": .string("spare")]) })
        }
        try expectSchemaOfANewDatabase(at: migration.url, of: model)
    }

    @Test func theBackupHoldsTheFileAsItWasBeforeTheMigration() throws {
        let migration = try MigrationCase()
        defer { migration.cleanUp() }
        let model = try MigrationCase.model { entities in entities.remove(at: 3) }
        try migration.migrate(to: model) { store in
            expectEqual(store.migrationBackupPath, migration.backupPath)
        }
        let copy = migration.directory.appendingPathComponent("restored.sqlite")
        try FileManager.default.copyItem(atPath: migration.backupPath, toPath: copy.path)
        let restored = try SQLiteStore(url: copy, model: MigrationFixtures.sensors)
        defer { restored.close() }
        expectEqual(try restored.everything(), migration.before)
        expectEqual(try restored.history(since: 0, limit: 100), migration.historyBefore)
        expectNil(restored.migration)
        expectEqual(restored.lastTransaction, 8)
    }

    @Test func previousVersionsListTheModelsTheFileWasMadeWithOldestFirst() throws {
        let migration = try MigrationCase()
        defer { migration.cleanUp() }
        let second = try MigrationCase.model { entities in
            entities[1].attributes.append(AttributeDescription("unit", .string, optional: true))
        }
        let third = try MigrationCase.model { entities in entities.remove(at: 3) }
        try migration.migrate(to: second) { store in
            expectEqual(store.previousModelVersions, [MigrationFixtures.sensors.versionHash])
        }
        try migration.migrate(to: third) { store in
            expectEqual(store.previousModelVersions, [MigrationFixtures.sensors.versionHash, second.versionHash])
        }
        try migration.migrate(to: third) { store in
            expectNil(store.migration)
            expectEqual(store.previousModelVersions.count, 2)
        }
    }
}
