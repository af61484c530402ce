import Foundation

@testable import ContextBusObjectGraph
@testable import ContextBusSQLite
@testable import ContextBusSupport

/// The databases the migration tests start from, as this version of the store writes them: committed under
/// `Tests/Fixtures/Migration/`, rebuilt by `scripts/make-migration-fixtures`, and rebuilt and compared by
/// `MigrationFixtureTests` so that they cannot drift from what the store writes.
///
/// `sensors-v1.sqlite` holds the `sensors` model (also committed as `sensors-v1.json`, for storesvc's
/// `--model`): every attribute type, a unique key, one-to-many and many-to-many relationships, an entity to
/// remove; eight transactions of inserts, updates and deletes, so the history holds every kind of row.
enum MigrationFixtures {
    /// Where the committed fixtures are.
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/Migration")

    static var sensorsDatabase: URL { directory.appendingPathComponent("sensors-v1.sqlite") }
    static var sensorsModelFile: URL { directory.appendingPathComponent("sensors-v1.json") }

    /// Site 1–3, Sensor 1–6 (6 deleted), Tag 1–3, Legacy 1–2 (2 deleted).
    static let sensors: Model = {
        do {
            return try Model(entities: [
                EntityDescription(
                    name: "Site",
                    attributes: [
                        AttributeDescription("title", .string),
                        AttributeDescription("code", .string, optional: true, indexed: true),
                    ],
                    relationships: [
                        RelationshipDescription("sensors", destination: "Sensor", toMany: true, inverse: "site")
                    ]),
                EntityDescription(
                    name: "Sensor",
                    attributes: [
                        AttributeDescription("name", .string, indexed: true),
                        AttributeDescription("level", .int),
                        AttributeDescription("note", .string, optional: true),
                        AttributeDescription("serial", .string, optional: true),
                        AttributeDescription("kind", .string, optional: true, indexed: true),
                        AttributeDescription("installed", .date, optional: true),
                        AttributeDescription("raw", .binary, optional: true),
                        AttributeDescription("uid", .uuid, optional: true),
                        AttributeDescription("config", .json, optional: true),
                        AttributeDescription("active", .bool, default: .bool(true)),
                        AttributeDescription("gain", .double, optional: true),
                    ],
                    relationships: [
                        RelationshipDescription("site", destination: "Site", inverse: "sensors"),
                        RelationshipDescription("tags", destination: "Tag", toMany: true, inverse: "sensors"),
                    ],
                    uniqueBy: [["name"]]),
                EntityDescription(
                    name: "Tag", attributes: [AttributeDescription("label", .string)],
                    relationships: [
                        RelationshipDescription("sensors", destination: "Sensor", toMany: true, inverse: "tags")
                    ]),
                EntityDescription(name: "Legacy", attributes: [AttributeDescription("payload", .string)]),
            ])
        } catch {
            fatalError("the sensors fixture model is invalid: \(error)")
        }
    }()

    private static func id(_ entity: String, _ number: Int64) -> PropertyValue {
        .reference(ObjectID(entity: entity, number: number))
    }

    private static func date(_ text: String) -> PropertyValue {
        .date(Date(rfc3339: text)!)
    }

    /// Writes `sensors-v1.sqlite` and `sensors-v1.json` into `directory` (replacing them).
    static func writeSensors(into directory: URL) throws {
        let url = directory.appendingPathComponent("sensors-v1.sqlite")
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
        let store = try SQLiteStore(url: url, model: sensors, configuration: .init(pageSize: 1024))
        var isClosed = false
        defer { if !isClosed { store.close() } }
        func save(_ request: SaveRequest) throws { _ = try store.save(request) }
        func insert(_ entity: String, _ ref: String, _ values: [String: PropertyValue]) -> SaveRequest.Insert {
            SaveRequest.Insert(entity: entity, ref: ref, values: values)
        }
        func temporary(_ entity: String, _ ref: String) -> PropertyValue {
            .reference(ObjectID(entity: entity, temporaryReference: ref))
        }
        // 1: sites and tags.
        try save(
            SaveRequest(
                inserts: [
                    insert("Site", "s1", ["title": .string("North"), "code": .string("N")]),
                    insert("Site", "s2", ["title": .string("South")]),
                    insert("Site", "s3", ["title": .string("East"), "code": .string("E")]),
                    insert("Tag", "t1", ["label": .string("outdoor")]),
                    insert("Tag", "t2", ["label": .string("indoor")]),
                    insert("Tag", "t3", ["label": .string("spare")]),
                ], author: "fixture"))
        // 2: sensors, with every type, nulls, two sharing a serial.
        try save(
            SaveRequest(
                inserts: [
                    insert(
                        "Sensor", "a",
                        [
                            "name": .string("alpha"), "level": .int(3), "serial": .string("S-1"),
                            "kind": .string("temp"), "installed": date("2026-01-02T03:04:05.250Z"),
                            "raw": .binary(Data([1, 2, 3])),
                            "uid": .uuid(UUID(uuidString: "6F9619FF-8B86-D011-B42D-00C04FC964FF")!),
                            "config": .json(.object(["k": .array([.int(1), .int(2)])])), "gain": .double(1.5),
                            "site": id("Site", 1), "tags": .references([ObjectID(entity: "Tag", number: 1)]),
                        ]),
                    insert(
                        "Sensor", "b",
                        [
                            "name": .string("beta"), "level": .int(5), "note": .string("roof"),
                            "serial": .string("S-1"), "kind": .string("temp"), "active": .bool(false),
                            "site": id("Site", 1),
                            "tags": .references([
                                ObjectID(entity: "Tag", number: 1), ObjectID(entity: "Tag", number: 2),
                            ]),
                        ]),
                    insert(
                        "Sensor", "c",
                        [
                            "name": .string("gamma"), "level": .int(-2), "kind": .string("hum"),
                            "installed": date("2025-12-31T23:59:59.999Z"), "raw": .binary(Data()),
                            "config": .json(.string("plain")), "gain": .double(0.25),
                        ]),
                    insert(
                        "Sensor", "d",
                        [
                            "name": .string("delta"), "level": .int(0), "note": .string(""),
                            "serial": .string("S-4"), "gain": .double(-3), "site": id("Site", 3),
                            "tags": .references([ObjectID(entity: "Tag", number: 2)]),
                        ]),
                    insert(
                        "Sensor", "e",
                        [
                            "name": .string("epsilon"), "level": .int(9_000_000_000), "note": .string("ünïcode ✓"),
                            "kind": .string("hum"), "site": id("Site", 2),
                        ]),
                    insert("Sensor", "f", ["name": .string("zeta"), "level": .int(1), "site": id("Site", 2)]),
                ], author: "fixture"))
        // 3: the entity a migration removes.
        try save(
            SaveRequest(
                inserts: [
                    insert("Legacy", "l1", ["payload": .string("old")]),
                    insert("Legacy", "l2", ["payload": .string("older")]),
                ]))
        // 4: updates of attributes and of a to-one.
        try save(
            SaveRequest(
                updates: [
                    .init(
                        id: ObjectID(entity: "Sensor", number: 2), version: 1,
                        values: ["level": .int(7), "note": .string("recalibrated")]),
                    .init(id: ObjectID(entity: "Sensor", number: 3), version: 1, values: ["site": id("Site", 2)]),
                ], author: "fixture"))
        // 5: deletes.
        try save(
            SaveRequest(
                deletes: [
                    .init(id: ObjectID(entity: "Sensor", number: 6), version: 1),
                    .init(id: ObjectID(entity: "Legacy", number: 2), version: 1),
                ]))
        // 6: a to-many set changed.
        try save(
            SaveRequest(
                updates: [
                    .init(
                        id: ObjectID(entity: "Sensor", number: 1), version: nil,
                        values: [
                            "tags": .references([
                                ObjectID(entity: "Tag", number: 1), ObjectID(entity: "Tag", number: 3),
                            ])
                        ])
                ]))
        // 7: only the removed entity changes.
        try save(
            SaveRequest(
                updates: [
                    .init(id: ObjectID(entity: "Legacy", number: 1), version: 1, values: ["payload": .string("kept")])
                ]))
        // 8: one more insert, naming a new site in the same save.
        try save(
            SaveRequest(
                inserts: [
                    insert("Site", "s4", ["title": .string("West")]),
                    insert(
                        "Sensor", "g",
                        ["name": .string("eta"), "level": .int(4), "site": temporary("Site", "s4")]),
                ]))
        store.close()
        isClosed = true
        try trimToItsPages(url)
        let model = try StoredJSON.writer.string(sensors.jsonValue)
        try Data((model + "\n").utf8).write(to: directory.appendingPathComponent("sensors-v1.json"))
    }

    /// Cuts the file to its pages: the store grows a file in 1 MiB chunks, mostly zeros a fixture need not hold.
    private static func trimToItsPages(_ url: URL) throws {
        let connection = try SQLiteConnection(path: url.path, readOnly: true, busyTimeoutMilliseconds: 1_000)
        let bytes =
            (try connection.integer("PRAGMA page_size") ?? 0) * (try connection.integer("PRAGMA page_count") ?? 0)
        connection.close()
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        try handle.truncate(atOffset: UInt64(bytes))
        // The read left an empty WAL and its index beside the file.
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
    }

    /// Copies the committed sensors database into `directory` as `name`.
    static func copySensors(into directory: URL, as name: String = "store.sqlite") throws -> URL {
        let url = directory.appendingPathComponent(name)
        try FileManager.default.copyItem(at: sensorsDatabase, to: url)
        return url
    }
}
