import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSQLite

/// Unique keys (`uniqueBy`) and the insert policies of docs/protocol.md ("Unique constraints and upsert"), against
/// every store.
struct StoreUniqueKeyTests {
    /// Sensors unique by `serial`, and by `maker` and `model` together (`model` optional: a `null` never
    /// collides); probes point at a sensor.
    static let model: Model = try! Model(entities: [
        EntityDescription(
            name: "Sensor",
            attributes: [
                AttributeDescription("serial", .string),
                AttributeDescription("maker", .string, default: .string("acme")),
                AttributeDescription("model", .string, optional: true),
                AttributeDescription("label", .string, optional: true),
                AttributeDescription("count", .int, default: .int(0)),
            ],
            relationships: [
                RelationshipDescription("probes", destination: "Probe", toMany: true, inverse: "sensor")
            ],
            uniqueBy: [["serial"], ["maker", "model"]]),
        EntityDescription(
            name: "Probe", attributes: [AttributeDescription("name", .string)],
            relationships: [RelationshipDescription("sensor", destination: "Sensor", inverse: "probes")]),
    ])

    @discardableResult
    private func sensor(_ store: TestStore, serial: String, label: String = "first") throws -> ObjectID {
        try store.insert("Sensor", ["serial": .string(serial), "label": .string(label), "count": .int(1)])
    }

    @Test(arguments: StoreFactory.all)
    func anInsertWithATakenKeyFailsUnderErrorNamingTheInsertAndTheObject(factory: StoreFactory) throws {
        let store = try factory.make(Self.model)
        let existing = try sensor(store, serial: "S1")
        let current = try #require(try store.snapshot(existing))
        let error = storeError {
            try store.commit(
                SaveRequest(inserts: [
                    .init(id: tmp("Sensor", "s"), values: ["serial": .string("S1"), "label": .string("second")])
                ]))
        }
        expectEqual(
            error,
            .conflict([
                .init(
                    id: existing, version: nil, currentVersion: 1,
                    currentValues: current.values.merging(
                        ["probes": .references([])], uniquingKeysWith: { a, _ in a }),
                    insert: tmp("Sensor", "s"), uniqueKey: ["serial": .string("S1")])
            ]))
        expectEqual(try store.all("Sensor").count, 1)
        expectEqual(store.lastTransaction, 1)
    }

    @Test(arguments: [MergePolicy.objectTrump, .overwrite], StoreFactory.all)
    func anInsertWithATakenKeyUpdatesTheObjectUnderObjectTrump(policy: MergePolicy, factory: StoreFactory) throws {
        let store = try factory.make(Self.model)
        let existing = try sensor(store, serial: "S1")
        let result = try store.commit(
            SaveRequest(
                inserts: [
                    .init(id: tmp("Sensor", "s"), values: ["serial": .string("S1"), "label": .string("second")])
                ],
                mergePolicy: policy))
        expectEqual(result.ids[tmp("Sensor", "s")], existing)
        expectEqual(result.versions[existing], 2)
        let snapshot = try #require(try store.snapshot(existing))
        expectEqual(snapshot.values["label"], .string("second"))
        // A key the insert leaves out keeps the object's value (not the default).
        expectEqual(snapshot.values["count"], .int(1))
        let changes = try #require(result.changes)
        expectEmpty(changes.inserted)
        expectEqual(changes.updated.map(\.snapshot.id), [existing])
        expectEqual(changes.updated.first?.changedKeys, ["label"])
        expectEqual(try store.all("Sensor").count, 1)
    }

    @Test(arguments: [MergePolicy.storeTrump, .rollback], StoreFactory.all)
    func anInsertWithATakenKeyFindsTheObjectUnderStoreTrump(policy: MergePolicy, factory: StoreFactory) throws {
        let store = try factory.make(Self.model)
        let existing = try sensor(store, serial: "S1")
        let result = try store.commit(
            SaveRequest(
                inserts: [
                    .init(id: tmp("Sensor", "s"), values: ["serial": .string("S1"), "label": .string("second")]),
                    .init(
                        id: tmp("Probe", "p"),
                        values: ["name": .string("p1"), "sensor": .reference(tmp("Sensor", "s"))]),
                ],
                mergePolicy: policy))
        expectEqual(result.ids[tmp("Sensor", "s")], existing)
        let snapshot = try #require(try store.snapshot(existing))
        expectEqual(snapshot.values["label"], .string("first"))
        // The probe of the same save points at the object the insert became.
        let probe = try #require(result.ids[tmp("Probe", "p")])
        expectEqual(try store.snapshot(probe)?.values["sensor"], .reference(existing))
        expectEqual(snapshot.values["probes"], .references([probe]))
    }

    @Test(arguments: StoreFactory.all)
    func twoInsertsWithOneKeyInOneSaveAreOneObject(factory: StoreFactory) throws {
        let store = try factory.make(Self.model)
        let first = tmp("Sensor", "a")
        let second = tmp("Sensor", "b")
        let request = SaveRequest(
            inserts: [
                .init(id: first, values: ["serial": .string("S9"), "label": .string("a")]),
                .init(id: second, values: ["serial": .string("S9"), "label": .string("b")]),
            ])
        let error = storeError { try store.commit(request) }
        expectEqual(error, .conflict([.init(id: second, uniqueKey: ["serial": .string("S9")], conflictsWith: first)]))
        var upsert = request
        upsert.mergePolicy = .objectTrump
        let result = try store.commit(upsert)
        let id = try #require(result.ids[first])
        expectEqual(result.ids[second], id)
        expectEqual(try store.all("Sensor").map(\.id), [id])
        expectEqual(try store.snapshot(id)?.values["label"], .string("b"))
    }

    @Test(arguments: MergePolicy.allCases, StoreFactory.all)
    func anUpdateThatWouldShareAKeyFailsUnderEveryPolicy(policy: MergePolicy, factory: StoreFactory) throws {
        let store = try factory.make(Self.model)
        let one = try sensor(store, serial: "S1")
        let two = try sensor(store, serial: "S2")
        let error = storeError {
            try store.commit(
                SaveRequest(
                    updates: [.init(id: two, version: nil, values: ["serial": .string("S1")])], mergePolicy: policy))
        }
        expectEqual(error, .conflict([.init(id: two, uniqueKey: ["serial": .string("S1")], conflictsWith: one)]))
        expectEqual(try store.snapshot(two)?.values["serial"], .string("S2"))
    }

    @Test(arguments: StoreFactory.all)
    func aNullNeverCollidesAndAKeyOfSeveralValuesCollidesOnlyWhole(factory: StoreFactory) throws {
        let store = try factory.make(Self.model)
        // `model` null: the (maker, model) key never collides.
        try sensor(store, serial: "S1")
        try sensor(store, serial: "S2")
        try store.insert("Sensor", ["serial": .string("S3"), "model": .string("m1")])
        // Same maker (the default), another model: no collision.
        try store.insert("Sensor", ["serial": .string("S4"), "model": .string("m2")])
        let error = storeError { try store.insert("Sensor", ["serial": .string("S5"), "model": .string("m1")]) }
        guard case .conflict(let conflicts)? = error else {
            Issue.record("expected a conflict, got \(String(describing: error))")
            return
        }
        expectEqual(conflicts.first?.uniqueKey, ["maker": .string("acme"), "model": .string("m1")])
        expectEqual(try store.all("Sensor").count, 4)
    }

    /// Probes unique by their sensor and name together: a key through a to-one relationship.
    static let probesBySensor: Model = try! Model(entities: [
        EntityDescription(
            name: "Sensor", attributes: [AttributeDescription("serial", .string)],
            relationships: [RelationshipDescription("probes", destination: "Probe", toMany: true, inverse: "sensor")]),
        EntityDescription(
            name: "Probe", attributes: [AttributeDescription("name", .string)],
            relationships: [RelationshipDescription("sensor", destination: "Sensor", inverse: "probes")],
            uniqueBy: [["sensor", "name"]]),
    ])

    @Test(arguments: StoreFactory.all)
    func aKeyThroughAToOneToAnObjectOfTheSameSaveIsFreeAndCollidesOnceSaved(factory: StoreFactory) throws {
        let store = try factory.make(Self.probesBySensor)
        let sensor = tmp("Sensor", "s")
        let saved = try store.commit(
            SaveRequest(inserts: [
                .init(id: sensor, values: ["serial": .string("S1")]),
                .init(id: tmp("Probe", "p1"), values: ["name": .string("tip"), "sensor": .reference(sensor)]),
            ]))
        expectEqual(try store.all("Probe").count, 1)
        // Two inserts of one save with one key through a new sensor: one object (find-or-create).
        let other = tmp("Sensor", "s2")
        let both = try store.commit(
            SaveRequest(
                inserts: [
                    .init(id: other, values: ["serial": .string("S2")]),
                    .init(id: tmp("Probe", "p2"), values: ["name": .string("tip"), "sensor": .reference(other)]),
                    .init(id: tmp("Probe", "p3"), values: ["name": .string("tip"), "sensor": .reference(other)]),
                ], mergePolicy: .storeTrump))
        expectEqual(both.ids[tmp("Probe", "p3")], both.ids[tmp("Probe", "p2")])
        expectEqual(try store.all("Probe").count, 2)
        let permanent = try #require(saved.ids[sensor])
        let error = storeError {
            try store.insert("Probe", ["name": .string("tip"), "sensor": .reference(permanent)])
        }
        guard case .conflict(let conflicts)? = error else {
            Issue.record("expected a conflict, got \(String(describing: error))")
            return
        }
        expectEqual(conflicts.first?.uniqueKey, ["sensor": .reference(permanent), "name": .string("tip")])
    }

    @Test(arguments: StoreFactory.all)
    func aDeletedObjectsKeyIsFreeAgain(factory: StoreFactory) throws {
        let store = try factory.make(Self.model)
        let old = try sensor(store, serial: "S1")
        try store.commit(SaveRequest(deletes: [.init(id: old, version: nil)]))
        let new = try sensor(store, serial: "S1")
        expectTrue(new != old)
        expectEqual(try store.all("Sensor").map(\.id), [new])
    }

    @Test func aDatabaseWhoseObjectsShareAKeyRefusesAModelThatMakesItUnique() throws {
        let directory = try TestStore.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("store.sqlite")
        var entity = Self.model.entities[0]
        entity.uniqueBy = []
        let loose = try Model(entities: [entity, Self.model.entities[1]])
        let first = try SQLiteStore(url: url, model: loose)
        let a = try first.insert("Sensor", ["serial": .string("S1")])
        let b = try first.insert("Sensor", ["serial": .string("S1")])
        try first.insert("Sensor", ["serial": .string("S2")])
        first.close()
        #expect(
            throws: StoreError.unavailable("cannot make Sensor unique by serial: \(a), \(b) have the same serial")
        ) {
            _ = try SQLiteStore(url: url, model: Self.model)
        }
        // Nothing changed: the old model still opens the file, with its three sensors.
        let again = try SQLiteStore(url: url, model: loose)
        expectEqual(try again.all("Sensor").count, 3)
        again.close()
    }

    @Test func aDatabaseMadeWithoutUniqueKeysGetsThemInPlace() throws {
        let directory = try TestStore.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("store.sqlite")
        var entity = Self.model.entities[0]
        entity.uniqueBy = []
        let loose = try Model(entities: [entity, Self.model.entities[1]])
        let first = try SQLiteStore(url: url, model: loose)
        let one = try first.insert("Sensor", ["serial": .string("S1")])
        first.close()
        let store = try SQLiteStore(url: url, model: Self.model)
        defer { store.close() }
        let result = try store.commit(
            SaveRequest(
                inserts: [.init(id: tmp("Sensor", "s"), values: ["serial": .string("S1"), "label": .string("x")])],
                mergePolicy: .objectTrump))
        expectEqual(result.ids[tmp("Sensor", "s")], one)
        expectEqual(try store.all("Sensor").count, 1)
    }

    @Test(arguments: StoreFactory.all)
    func aContextsUpsertedInsertIsRegisteredAsTheExistingObject(factory: StoreFactory) throws {
        let store = try factory.make(Self.model)
        let existing = try sensor(store, serial: "S1")
        let context = ObjectContext(store: store, name: "importer")
        context.mergePolicy = .objectTrump
        try context.performAndWait {
            let earlier = try context.existingObject(with: existing)
            expectEqual(earlier.string("label"), "first")
            let sensor = context.insert(entity: "Sensor")
            sensor["serial", as: String.self] = "S1"
            sensor["label", as: String.self] = "imported"
            try context.save()
            expectEqual(sensor.objectID, existing)
            expectTrue(context.registeredObject(for: existing) === sensor)
            expectEqual(sensor.string("label"), "imported")
            // The instance is the object from now on: a later change saves as an update of it.
            sensor["label", as: String.self] = "again"
            try context.save()
        }
        let snapshot = try store.snapshot(existing)
        expectEqual(snapshot?.values["label"], .string("again"))
        // A key the insert did not set (`count`) kept the object's value, not the model's default.
        expectEqual(snapshot?.values["count"], .int(1))
        expectEqual(try store.all("Sensor").count, 1)
    }
}
