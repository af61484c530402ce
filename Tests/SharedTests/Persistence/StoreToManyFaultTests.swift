import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSQLite
@testable import ContextBusSupport

/// To-many relationships are faults: saving one side of a one-to-many does not read the other
/// side's members, and the members are still all there when asked for.
struct StoreToManyFaultTests {
    static let readingCount = 2_000

    /// A device with `readingCount` readings, saved straight into the store.
    private static func seedDevice(in store: any PersistentStore) throws -> ObjectID {
        let device = try store.save(
            SaveRequest(inserts: [.init(id: tmp("Device", "d"), values: ["address": .string("AA")])])
        ).ids[tmp("Device", "d")]!
        for batch in 0..<(readingCount / 1_000) {
            let inserts = (0..<1_000).map { i in
                SaveRequest.Insert(
                    id: tmp("Reading", "r\(i)"), values: reading(batch * 1_000 + i, device: device))
            }
            _ = try store.save(SaveRequest(inserts: inserts))
        }
        return device
    }

    private static func reading(_ i: Int, device: ObjectID) -> [String: PropertyValue] {
        [
            "characteristic": .string("2a\(i % 100)"), "value": .binary(Data([1])),
            "time": .date(Date(timeIntervalSince1970: Double(i))), "device": .reference(device),
        ]
    }

    @Test(arguments: StoreFactory.all)
    func savingAReadingForADeviceWithThousandsOfReadingsLeavesThemOutOfTheChangeSet(factory: StoreFactory) throws {
        let store = try factory.make(Model.deviceReadings)
        let device = try Self.seedDevice(in: store)
        let version = try #require(try store.snapshot(device)?.version)
        let result = try store.save(
            SaveRequest(inserts: [.init(id: tmp("Reading", "new"), values: Self.reading(-1, device: device))]))
        let reading = try #require(result.ids[tmp("Reading", "new")])
        expectEqual(result.versions[device], version + 1)
        let update = try #require(result.changes!.updated.first { $0.snapshot.id == device })
        expectEqual(update.changedKeys, ["readings"])
        expectNil(update.snapshot.values["readings"])
        expectNil(update.previousValues["readings"])
        expectEqual(update.snapshot.values["address"], .string("AA"))
        try expectEqual(store.history(since: result.txn - 1, limit: 1), [result.changes])
        let members = try #require(try store.snapshot(device)?.values["readings"]?.referencedIDs)
        expectEqual(members.count, Self.readingCount + 1)
        expectEqual(members.last, reading)
    }

    @Test func savingAReadingReadsNoneOfItsDevicesReadings() throws {
        let testStore = try StoreFactory.sqlite.make(Model.deviceReadings)
        let store = try #require(testStore.store as? SQLiteStore)
        let device = try Self.seedDevice(in: store)
        let before = store.toManyMembersReadBySaves
        _ = try store.save(
            SaveRequest(inserts: [.init(id: tmp("Reading", "new"), values: Self.reading(-1, device: device))]))
        expectEqual(store.toManyMembersReadBySaves, before)
        // Moving a reading away reads no members either; replacing the whole set does.
        let moved = try #require(try store.snapshot(device)?.values["readings"]?.referencedIDs.first)
        _ = try store.save(SaveRequest(updates: [.init(id: moved, version: nil, values: ["device": .null])]))
        expectEqual(store.toManyMembersReadBySaves, before)
        _ = try store.save(
            SaveRequest(updates: [.init(id: device, version: nil, values: ["readings": .references([])])]))
        expectEqual(store.toManyMembersReadBySaves, before + Self.readingCount)
        try expectEqual(store.snapshot(device)?.values["readings"], .references([]))
    }

    @Test(arguments: StoreFactory.all)
    func aContextSavingAReadingForAFaultedDeviceStillListsEveryReading(factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let device = try Self.seedDevice(in: fixture.store)
        let sqlite = fixture.store as? SQLiteStore
        let readBefore = (
            sqlite?.toManyMembersReadBySaves ?? 0, sqlite?.membersReadByGets.load(ordering: .relaxed) ?? 0
        )
        let context = fixture.makeContext()
        try context.performAndWait {
            let object = context.object(with: device)
            context.makeReading(device: object)
            try context.save()
            expectTrue(object.isToManyFault("readings"))
            if let sqlite {
                expectEqual(sqlite.toManyMembersReadBySaves, readBefore.0)
                expectEqual(sqlite.membersReadByGets.load(ordering: .relaxed), readBefore.1)
            }
            expectEqual(object.relatedObjects(forKey: "readings").count, Self.readingCount + 1)
            expectFalse(object.hasChanges)
        }
    }

    @Test(arguments: StoreFactory.all)
    func existingObjectLoadsTheDeviceWithItsReadingsAFault(factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let device = try Self.seedDevice(in: fixture.store)
        let sqlite = fixture.store as? SQLiteStore
        let readBefore = sqlite?.membersReadByGets.load(ordering: .relaxed) ?? 0
        let context = fixture.makeContext()
        try context.performAndWait {
            let object = try context.existingObject(with: device)
            expectTrue(object.isToManyFault("readings"))
            expectEqual(object["address", as: String.self], "AA")
            expectEqual((sqlite?.membersReadByGets.load(ordering: .relaxed) ?? 0), readBefore)
            expectEqual(object.relatedObjects(forKey: "readings").count, Self.readingCount)
        }
    }

    @Test(arguments: StoreFactory.all)
    func mergingAReadingIntoALoadedDeviceUpdatesItsReadingsWithoutReadingThemAgain(factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let device = try Self.seedDevice(in: fixture.store)
        let viewer = fixture.makeContext("viewer")
        let count = viewer.performAndWait { viewer.object(with: device).relatedObjects(forKey: "readings").count }
        expectEqual(count, Self.readingCount)
        let result = try fixture.store.save(
            SaveRequest(inserts: [.init(id: tmp("Reading", "new"), values: Self.reading(-1, device: device))]))
        let reading = try #require(result.ids[tmp("Reading", "new")])
        let sqlite = fixture.store as? SQLiteStore
        let readBefore = sqlite?.membersReadByGets.load(ordering: .relaxed) ?? 0
        viewer.performAndWait {
            viewer.merge(result.changes!)
            let object = viewer.object(with: device)
            expectFalse(object.isToManyFault("readings"))
            let members = object.relatedObjects(forKey: "readings").map(\.objectID)
            expectEqual(members.count, Self.readingCount + 1)
            expectTrue(members.contains(reading))
            expectEqual(object.version, result.versions[device])
        }
        expectEqual((sqlite?.membersReadByGets.load(ordering: .relaxed) ?? 0), readBefore)
    }

    @Test(arguments: StoreFactory.all)
    func mergingAfterAMissedTransactionMakesTheReadingsAFaultThatReadsTheStore(factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let device = try Self.seedDevice(in: fixture.store)
        let viewer = fixture.makeContext("viewer")
        _ = viewer.performAndWait { viewer.object(with: device).relatedObjects(forKey: "readings") }
        _ = try fixture.store.save(
            SaveRequest(inserts: [.init(id: tmp("Reading", "missed"), values: Self.reading(-1, device: device))]))
        let second = try fixture.store.save(
            SaveRequest(inserts: [.init(id: tmp("Reading", "seen"), values: Self.reading(-2, device: device))]))
        viewer.performAndWait {
            viewer.merge(second.changes!)
            let object = viewer.object(with: device)
            expectTrue(object.isToManyFault("readings"))
            expectEqual(object.relatedObjects(forKey: "readings").count, Self.readingCount + 2)
        }
    }

    @Test(arguments: StoreFactory.all)
    func aSiblingsReadingReachesALoadedSetThroughTheParentsChangeSet(factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let device = try fixture.seedDevices(1, readingsEach: 3)[0]
        let parent = fixture.makeContext("parent")
        let viewer = ObjectContext(parent: parent, name: "viewer")
        let writer = ObjectContext(parent: parent, name: "writer")
        expectEqual(viewer.performAndWait { viewer.object(with: device).relatedObjects(forKey: "readings").count }, 3)
        let changes = try writer.performAndWait {
            let object = writer.object(with: device)
            writer.makeReading(device: object)
            let saved = Locked<[ChangeSet]>([])
            let observation = writer.observeSaves { changes in saved.withLock { $0.append(changes) } }
            try writer.save()
            observation.cancel()
            return try #require(saved.withLock { $0.first })
        }
        // The writer's change set leaves the device's readings out (txn 0: versions do not move).
        let update = try #require(changes.updated.first { $0.snapshot.id == device })
        expectTrue(update.changedKeys == ["readings"] && update.snapshot.values["readings"] == nil)
        viewer.performAndWait {
            viewer.merge(changes)
            let object = viewer.object(with: device)
            expectFalse(object.isToManyFault("readings"))
            expectEqual(object.relatedObjects(forKey: "readings").count, 4)
        }
    }

    @Test(arguments: StoreFactory.all)
    func completingToManyValuesFillsTheWholeSetAndThePreviousOne(factory: StoreFactory) throws {
        let store = try factory.make(Model.deviceReadings)
        let device = try store.insert("Device", ["address": .string("AA")])
        let first = try store.insert("Reading", Self.reading(1, device: device))
        let result = try store.save(
            SaveRequest(inserts: [.init(id: tmp("Reading", "new"), values: Self.reading(2, device: device))]))
        let reading = try #require(result.ids[tmp("Reading", "new")])
        expectTrue(result.changes!.hasToManyFaults)
        let completed = try store.completingToManyValues(in: result.changes!)
        expectFalse(completed.hasToManyFaults)
        let update = try #require(completed.updated.first { $0.snapshot.id == device })
        expectEqual(update.snapshot.values["readings"], .references([first, reading]))
        expectEqual(update.previousValues["readings"], .references([first]))
        expectEqual(completed.inserted, result.changes!.inserted)
    }
}
