import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph

struct ObjectContextParentChildTests {
    @Test(arguments: StoreFactory.all)
    func childSaveGoesToTheParentInMemoryThenTheParentSavesToTheStore(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let root = fixture.makeContext("root")
        let child = ObjectContext(parent: root, name: "child")
        let temporaryID = try child.performAndWait {
            let device = child.makeDevice("kid")
            child.makeReading(device: device)
            try child.save()
            expectFalse(child.hasChanges)
            expectFalse(device.isInserted)
            expectTrue(device.objectID.isTemporary)  // temporary until the top-level context saves
            return device.objectID
        }
        expectEqual(fixture.store.lastTransaction, 0)
        let permanentID = try root.performAndWait {
            expectTrue(root.hasChanges)
            expectEqual(root.insertedObjects.count, 2)
            let device = try #require(root.registeredObject(for: temporaryID))
            expectTrue(device.isInserted)
            expectEqual(device.string("name"), "kid")
            expectEqual(device.relatedObjects(forKey: "readings").count, 1)
            try root.save()
            return device.objectID
        }
        expectFalse(permanentID.isTemporary)
        try expectEqual(fixture.store.snapshot(permanentID)?.values["name"], .string("kid"))
        child.performAndWait {
            // The child learns the permanent ID: both IDs reach the same object.
            let byPermanent = child.object(with: permanentID)
            expectEqual(byPermanent.objectID, permanentID)
            expectTrue(child.object(with: temporaryID) === byPermanent)
            expectEqual(byPermanent.string("name"), "kid")
        }
    }

    @Test(arguments: StoreFactory.all)
    func childFaultsAndFetchesSeeTheParentsUnsavedChanges(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let ids = try fixture.seedDevices(2)
        let root = fixture.makeContext("root")
        let newID = root.performAndWait {
            root.object(with: ids[0])["name", as: String.self] = "pending"
            root.delete(root.object(with: ids[1]))
            return root.makeDevice("fresh").objectID
        }
        let child = ObjectContext(parent: root, name: "child")
        try child.performAndWait {
            expectEqual(child.object(with: ids[0]).string("name"), "pending")
            expectEqual(storeError { _ = try child.existingObject(with: ids[1]) }, .notFound(ids[1]))
            expectEqual(child.object(with: newID).string("name"), "fresh")
            let names = try child.fetch(FetchRequest(entity: "Device", sortDescriptors: [.init("name")]))
                .map { $0.string("name") }
            expectEqual(names, ["fresh", "pending"])
        }
    }

    @Test(arguments: StoreFactory.all)
    func childUpdatesBecomeParentUpdatesWithTheStoreVersion(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let id = try fixture.seedDevices(1, readingsEach: 1)[0]
        let root = fixture.makeContext("root")
        let child = ObjectContext(parent: root, name: "child")
        try child.performAndWait {
            let device = child.object(with: id)
            expectEqual(device.version, 1)
            device["name", as: String.self] = "from child"
            let reading = device.relatedObjects(forKey: "readings")[0]
            child.delete(reading)
            try child.save()
        }
        try root.performAndWait {
            let device = try #require(root.registeredObject(for: id))
            expectTrue(device.isUpdated)
            expectEqual(device.version, 1)
            expectEqual(device.changedValues()["name"], .string("from child"))
            expectEqual(root.deletedObjects.count, 1)
            try root.save()
            expectEqual(device.version, 2)
        }
        expectTrue(try fixture.store.all("Reading").isEmpty)
        try expectEqual(fixture.store.snapshot(id)?.values["name"], .string("from child"))
    }

    @Test(arguments: StoreFactory.all)
    func grandchildSavesTravelUpThroughEveryLevel(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let root = fixture.makeContext("root")
        let middle = ObjectContext(parent: root, name: "middle")
        let leaf = ObjectContext(parent: middle, name: "leaf")
        try leaf.performAndWait {
            leaf.makeDevice("deep")
            try leaf.save()
        }
        expectEqual(root.performAndWait { root.hasChanges }, false)
        try middle.performAndWait { try middle.save() }
        try root.performAndWait { try root.save() }
        expectEqual(try fixture.store.all("Device").map { $0.values["name"] }, [.string("deep")])
        try leaf.performAndWait {
            try expectEqual(leaf.count(for: FetchRequest(entity: "Device")), 1)
            let ids = try leaf.fetchIDs(FetchRequest(entity: "Device"))
            expectTrue(ids.allSatisfy { !$0.isTemporary })
            expectEqual(leaf.registeredObjects.count, 1)  // the temporary object was re-keyed, not duplicated
        }
    }

    @Test(arguments: StoreFactory.all)
    func childValidationFailureLeavesTheParentUntouched(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let root = fixture.makeContext("root")
        let child = ObjectContext(parent: root, name: "child")
        child.performAndWait {
            let device = child.insert(entity: "Device")  // no address: required
            expectNotNil(storeError { try child.save() })
            expectTrue(device.isInserted)
            expectTrue(child.hasChanges)
        }
        expectEqual(root.performAndWait { root.hasChanges }, false)
    }

    @Test(arguments: StoreFactory.all)
    func discardingAChildLeavesTheParentAsItWas(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let id = try fixture.seedDevices(1)[0]
        let root = fixture.makeContext("root")
        do {
            let scratch = ObjectContext(parent: root, name: "scratch")
            scratch.performAndWait { scratch.object(with: id)["name", as: String.self] = "abandoned" }
        }
        root.performAndWait {
            expectFalse(root.hasChanges)
            expectEqual(root.object(with: id).string("name"), "d0")
        }
    }
}
