import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph

struct ObjectContextDeleteRuleTests {
    @Test(arguments: StoreFactory.all)
    func cascadeDeletesRelatedObjectsInMemoryAndInTheStore(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let deviceID = try fixture.seedDevices(1, readingsEach: 3)[0]
        let context = fixture.makeContext()
        try context.performAndWait {
            let device = context.object(with: deviceID)
            let readings = device.relatedObjects(forKey: "readings")
            expectEqual(readings.count, 3)
            context.delete(device)
            expectTrue(readings.allSatisfy { $0.isDeleted })
            expectEqual(context.deletedObjects.count, 4)
            try expectEqual(context.count(for: FetchRequest(entity: "Reading")), 0)
            try context.save()
            expectNil(device.managedObjectContext)
        }
        expectTrue(try fixture.store.all("Reading").isEmpty)
        expectTrue(try fixture.store.all("Device").isEmpty)
    }

    @Test(arguments: StoreFactory.all)
    func nullifyRemovesTheDeletedObjectFromTheOtherSide(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let deviceID = try fixture.seedDevices(1, readingsEach: 2)[0]
        let context = fixture.makeContext()
        try context.performAndWait {
            let device = context.object(with: deviceID)
            let doomed = device.relatedObjects(forKey: "readings")[0]
            context.delete(doomed)
            expectEqual(device.relatedObjects(forKey: "readings").count, 1)
            expectFalse(device.isDeleted)
            try context.save()
        }
        try expectEqual(fixture.store.snapshot(deviceID)?.values["readings"]?.referencedIDCount, 1)
        try expectEqual(fixture.store.all("Reading").count, 1)
    }

    @Test(arguments: StoreFactory.all)
    func denyFailsValidationWhileRelatedObjectsRemain(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory, model: TestModels.library)
        let context = fixture.makeContext()
        let shelfID = try context.performAndWait {
            let shelf = context.insert(entity: "Shelf")
            shelf["name", as: String.self] = "full"
            let book = context.insert(entity: "Book")
            book["title", as: String.self] = "kept"
            book.setRelatedObject(shelf, forKey: "shelf")
            try context.save()
            return shelf.objectID
        }
        let before = fixture.store.lastTransaction
        try context.performAndWait {
            let shelf = context.object(with: shelfID)
            let book = shelf.relatedObjects(forKey: "books")[0]
            context.delete(shelf)
            let error = storeError { try context.save() }
            guard case .validation(let failures)? = error else {
                Issue.record("expected validation failure, got \(String(describing: error))")
                return
            }
            expectEqual(failures.count, 1)
            expectEqual(failures.first?.id, shelfID)
            expectEqual(failures.first?.key, "books")
            expectEqual(failures.first?.reason.contains("deny"), true)
            expectTrue(shelf.isDeleted)  // nothing was undone
            expectEqual(fixture.store.lastTransaction, before)

            context.delete(book)
            try context.save()
        }
        expectTrue(try fixture.store.all("Shelf").isEmpty)
    }

    @Test(arguments: StoreFactory.all)
    func cascadeFollowsOneToOne(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory, model: TestModels.library)
        let context = fixture.makeContext()
        try context.performAndWait {
            let author = context.insert(entity: "Author")
            author["name", as: String.self] = "a"
            let portrait = context.insert(entity: "Portrait")
            portrait.setRelatedObject(author, forKey: "author")
            try context.save()
            context.delete(author)
            expectTrue(portrait.isDeleted)
            try context.save()
        }
        expectTrue(try fixture.store.all("Portrait").isEmpty)
    }
}
