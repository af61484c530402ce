import Dispatch
import Foundation
import Shared
import TestSupport
import Testing

@Suite struct ObjectContextTests {
    @Test(arguments: StoreFactory.all)
    func insertedObjectGetsTemporaryIDAndDefaults(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let context = fixture.makeContext()
        context.performAndWait {
            let device = context.insert(entity: "Device")
            #expect(device.objectID.isTemporary)
            #expect(device.isInserted && device.hasChanges && !device.isFault)
            expectEqual(device.bool("connected"), false)
            expectEqual(device["name"], .null)
            expectEqual(device.version, 0)
            #expect(context.hasChanges)
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
            #expect(!device.objectID.isTemporary)
            expectEqual(device.version, 1)
            #expect(!device.isInserted && !device.hasChanges && !context.hasChanges)
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
            #expect(device.isUpdated)
            expectEqual(device.changedValues(), ["name": .string("renamed")])
            expectEqual(device.committedValues(forKeys: ["name"]), ["name": .string("d0")])
            expectEqual(context.updatedObjects, [device])
            try context.save()
            expectEqual(device.version, 2)
            #expect(!device.isUpdated)
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
            #expect(!device.hasChanges)
            #expect(!context.hasChanges)
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
            #expect(fault.isFault)
            #expect(context.object(with: id) === fault)
            expectEqual(fault.string("name"), "later")
            #expect(!fault.isFault)
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
            #expect(objects.allSatisfy { $0.isFault })
            #expect(objects.map { $0.string("name") } == ["d0", "d1", "d2"])
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
            #expect(context.hasChanges)
            context.rollback()
            #expect(!context.hasChanges)
            expectEqual(first.string("name"), "d0")
            #expect(!second.isDeleted)
            #expect(inserted.managedObjectContext == nil)
            #expect(context.registeredObject(for: inserted.objectID) == nil)
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
            #expect(!context.hasChanges)
            #expect(context.registeredObjects.isEmpty)
            let again = context.object(with: id)
            #expect(again !== device)
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
            #expect(device.isFault)
            #expect(!device.hasChanges)
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
            #expect(storeError { _ = try context.existingObject(with: id) } == .notFound(id))
            let never = ObjectID(entity: "Device", number: 999)
            #expect(storeError { _ = try context.existingObject(with: never) } == .notFound(never))
            let deletedHere = context.insert(entity: "Device")
            context.delete(deletedHere)
            #expect(storeError { _ = try context.existingObject(with: deletedHere.objectID) } != nil)
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
            #expect(!deviceID.isTemporary && !reading.objectID.isTemporary)
            #expect(device.isInserted)
            expectEqual(reading.value(forKey: "device"), .reference(deviceID))
            #expect(context.object(with: deviceID) === device)
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
            #expect(failures.contains { $0.id == id && $0.key == "connected" && $0.reason.contains("bool") })
            #expect(
                failures.contains { $0.id == missing.objectID && $0.key == "address" && $0.reason.contains("required") }
            )
            expectEqual(failures.count, 2)
            #expect(context.hasChanges)
            expectEqual(device.string("name"), "fine")
            #expect(missing.isInserted)
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
            #expect(!context.hasChanges)
            #expect(context.deletedObjects.isEmpty && context.insertedObjects.isEmpty)
            try context.save()
        }
        expectEqual(fixture.store.lastTransaction, 0)
    }
}
