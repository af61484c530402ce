import Dispatch
import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph

struct ObjectContextTests {
    @Test(arguments: StoreFactory.all)
    func insertedObjectGetsTemporaryIDAndDefaults(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let context = fixture.makeContext()
        context.performAndWait {
            let device = context.insert(entity: "Device")
            expectTrue(device.objectID.isTemporary)
            expectTrue(device.isInserted && device.hasChanges && !device.isFault)
            expectEqual(device.bool("connected"), false)
            expectEqual(device["name"], .null)
            expectEqual(device.version, 0)
            expectTrue(context.hasChanges)
            expectEqual(context.insertedObjects, [device])
        }
    }

    @Test(arguments: StoreFactory.all)
    func saveGivesPermanentIDsAndVersionsAndAnotherContextFetchesThem(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let context = fixture.makeContext()
        let id = try context.performAndWait {
            let device = context.makeDevice("thermo")
            try context.save()
            expectFalse(device.objectID.isTemporary)
            expectEqual(device.version, 1)
            expectTrue(!device.isInserted && !device.hasChanges && !context.hasChanges)
            expectEqual(device.string("name"), "thermo")
            return device.objectID
        }
        try expectEqual(fixture.store.snapshot(id)?.values["name"], .string("thermo"))
        let other = fixture.makeContext("other")
        try other.performAndWait {
            let devices = try other.fetch(FetchRequest(entity: "Device"))
            expectEqual(devices.map(\.objectID), [id])
            expectEqual(devices.first?.string("address"), "AA:thermo")
            expectEqual(devices.first?.version, 1)
        }
    }

    @Test(arguments: StoreFactory.all)
    func updateSendsChangedKeysAndBumpsVersion(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let id = try fixture.seedDevices(1)[0]
        let context = fixture.makeContext()
        try context.performAndWait {
            let device = try context.existingObject(with: id)
            device["name", as: String.self] = "renamed"
            expectTrue(device.isUpdated)
            expectEqual(device.changedValues(), ["name": .string("renamed")])
            expectEqual(device.committedValues(forKeys: ["name"]), ["name": .string("d0")])
            expectEqual(context.updatedObjects, [device])
            try context.save()
            expectEqual(device.version, 2)
            expectFalse(device.isUpdated)
            expectEqual(device.committedValues(forKeys: ["name"]), ["name": .string("renamed")])
        }
        try expectEqual(fixture.store.snapshot(id)?.version, 2)
    }

    @Test(arguments: StoreFactory.all)
    func settingAValueBackToTheCommittedOneIsNoChange(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let id = try fixture.seedDevices(1)[0]
        let context = fixture.makeContext()
        let before = fixture.store.lastTransaction
        try context.performAndWait {
            let device = context.object(with: id)
            device["name", as: String.self] = "x"
            device["name", as: String.self] = "d0"
            expectFalse(device.hasChanges)
            expectFalse(context.hasChanges)
            try context.save()
        }
        expectEqual(fixture.store.lastTransaction, before)
    }

    @Test(arguments: StoreFactory.all)
    func objectWithIDIsAFaultThatLoadsOnFirstAccess(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let id = try fixture.seedDevices(1)[0]
        let context = fixture.makeContext()
        let fault = context.performAndWait { context.object(with: id) }
        // Changed in the store after the fault was made and before it was touched: the fault
        // must read the store when touched, not when made.
        let writer = fixture.makeContext("writer")
        try writer.performAndWait {
            writer.object(with: id)["name", as: String.self] = "later"
            try writer.save()
        }
        context.performAndWait {
            expectTrue(fault.isFault)
            expectTrue(context.object(with: id) === fault)
            expectEqual(fault.string("name"), "later")
            expectFalse(fault.isFault)
            expectEqual(fault.version, 2)
        }
    }

    @Test(arguments: StoreFactory.all)
    func fetchingIDsThenMaterialisingGivesFaults(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let ids = try fixture.seedDevices(3)
        let context = fixture.makeContext()
        try context.performAndWait {
            let fetched = try context.fetchIDs(FetchRequest(entity: "Device", sortDescriptors: [.init("name")]))
            expectEqual(fetched, ids)
            let objects = fetched.map { context.object(with: $0) }
            expectTrue(objects.allSatisfy { $0.isFault })
            expectEqual(objects.map { $0.string("name") }, ["d0", "d1", "d2"])
            try expectEqual(context.count(for: FetchRequest(entity: "Device")), 3)
        }
    }

    @Test(arguments: StoreFactory.all)
    func rollbackRestoresCommittedValuesAndDropsInsertsAndDeletes(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let ids = try fixture.seedDevices(2)
        let context = fixture.makeContext()
        context.performAndWait {
            let first = context.object(with: ids[0])
            let second = context.object(with: ids[1])
            first["name", as: String.self] = "changed"
            context.delete(second)
            let inserted = context.makeDevice("new")
            expectTrue(context.hasChanges)
            context.rollback()
            expectFalse(context.hasChanges)
            expectEqual(first.string("name"), "d0")
            expectFalse(second.isDeleted)
            expectNil(inserted.managedObjectContext)
            expectNil(context.registeredObject(for: inserted.objectID))
        }
    }

    @Test(arguments: StoreFactory.all)
    func resetForgetsEveryObjectAndChange(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let id = try fixture.seedDevices(1)[0]
        let context = fixture.makeContext()
        context.performAndWait {
            let device = context.object(with: id)
            device["name", as: String.self] = "changed"
            context.reset()
            expectFalse(context.hasChanges)
            expectEmpty(context.registeredObjects)
            let again = context.object(with: id)
            expectTrue(again !== device)
            expectEqual(again.string("name"), "d0")
        }
    }

    @Test(arguments: StoreFactory.all)
    func refreshWithoutMergingDropsChangesAndRefaults(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let id = try fixture.seedDevices(1)[0]
        let context = fixture.makeContext()
        let writer = fixture.makeContext("writer")
        try context.performAndWait {
            let device = context.object(with: id)
            device["name", as: String.self] = "mine"
            try writer.performAndWait {
                writer.object(with: id)["address", as: String.self] = "theirs"
                try writer.save()
            }
            context.refresh(device, mergeChanges: false)
            expectTrue(device.isFault)
            expectFalse(device.hasChanges)
            expectEqual(device.string("name"), "d0")
            expectEqual(device.string("address"), "theirs")
        }
    }

    @Test(arguments: StoreFactory.all)
    func refreshMergingKeepsChangesOnTopOfFreshValues(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let id = try fixture.seedDevices(1)[0]
        let context = fixture.makeContext()
        let writer = fixture.makeContext("writer")
        try context.performAndWait {
            let device = context.object(with: id)
            device["name", as: String.self] = "mine"
            try writer.performAndWait {
                writer.object(with: id)["address", as: String.self] = "theirs"
                try writer.save()
            }
            context.refresh(device, mergeChanges: true)
            expectEqual(device.string("name"), "mine")
            expectEqual(device.string("address"), "theirs")
            expectEqual(device.version, 2)
            try context.save()
            expectEqual(device.version, 3)
        }
    }

    @Test(arguments: StoreFactory.all)
    func existingObjectThrowsNotFoundWhenTheObjectIsGone(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let id = try fixture.seedDevices(1)[0]
        let deleter = fixture.makeContext("deleter")
        try deleter.performAndWait {
            deleter.delete(try deleter.existingObject(with: id))
            try deleter.save()
        }
        let context = fixture.makeContext()
        context.performAndWait {
            expectEqual(storeError { _ = try context.existingObject(with: id) }, .notFound(id))
            let never = ObjectID(entity: "Device", number: 999)
            expectEqual(storeError { _ = try context.existingObject(with: never) }, .notFound(never))
            let deletedHere = context.insert(entity: "Device")
            context.delete(deletedHere)
            expectNotNil(storeError { _ = try context.existingObject(with: deletedHere.objectID) })
        }
    }

    @Test(arguments: StoreFactory.all)
    func obtainPermanentIDsReservesIDsTheSaveKeeps(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let context = fixture.makeContext()
        try context.performAndWait {
            let device = context.makeDevice("early")
            let reading = context.makeReading(device: device)
            try context.obtainPermanentIDs(for: [device, reading])
            let deviceID = device.objectID
            expectTrue(!deviceID.isTemporary && !reading.objectID.isTemporary)
            expectTrue(device.isInserted)
            expectEqual(reading.value(forKey: "device"), .reference(deviceID))
            expectTrue(context.object(with: deviceID) === device)
            try context.save()
            expectEqual(device.objectID, deviceID)
            try expectEqual(fixture.store.snapshot(deviceID)?.values["readings"], .references([reading.objectID]))
        }
    }

    @Test(arguments: StoreFactory.all)
    func validationFailureNamesObjectKeyAndReasonAndChangesNothing(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let id = try fixture.seedDevices(1)[0]
        let context = fixture.makeContext()
        let before = fixture.store.lastTransaction
        context.performAndWait {
            let device = context.object(with: id)
            device["name", as: String.self] = "fine"
            device["connected"] = .string("yes")
            let missing = context.insert(entity: "Device")
            let error = storeError { try context.save() }
            guard case .validation(let failures)? = error else {
                Issue.record("expected a validation error, got \(String(describing: error))")
                return
            }
            expectTrue(failures.contains { $0.id == id && $0.key == "connected" && $0.reason.contains("bool") })
            expectTrue(
                failures.contains { $0.id == missing.objectID && $0.key == "address" && $0.reason.contains("required") }
            )
            expectEqual(failures.count, 2)
            expectTrue(context.hasChanges)
            expectEqual(device.string("name"), "fine")
            expectTrue(missing.isInserted)
        }
        expectEqual(fixture.store.lastTransaction, before)
        try expectEqual(fixture.store.snapshot(id)?.values["name"], .string("d0"))
    }

    @Test(arguments: StoreFactory.all)
    func deletingAnInsertedObjectSavesNothingForIt(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let context = fixture.makeContext()
        try context.performAndWait {
            let device = context.makeDevice("gone")
            context.delete(device)
            expectFalse(context.hasChanges)
            expectTrue(context.deletedObjects.isEmpty && context.insertedObjects.isEmpty)
            try context.save()
        }
        expectEqual(fixture.store.lastTransaction, 0)
    }
}
