import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSupport

struct ManagedObjectTests {
    @Test func typedAccessorsReadAndWriteEveryAttributeType() throws {
        let fixture = try ContextFixture(.inMemory, model: TestModels.library)
        let context = fixture.makeContext()
        context.performAndWait {
            let book = context.insert(entity: "Book")
            let date = Date(timeIntervalSince1970: 1_700_000_000)
            let uuid = UUID()
            book["title", as: String.self] = "Dune"
            book["pages", as: Int.self] = 412
            book["price", as: Double.self] = 9.5
            book["inPrint", as: Bool.self] = false
            book["published", as: Date.self] = date
            book["cover", as: Data.self] = Data([0xFF])
            book["isbn", as: UUID.self] = uuid
            book["meta", as: JSONValue.self] = .object(["a": .int(1)])
            expectEqual(book.string("title"), "Dune")
            expectEqual(book.int("pages"), 412)
            expectEqual(book["pages", as: Int.self], 412)
            expectEqual(book.double("price"), 9.5)
            expectEqual(book.bool("inPrint"), false)
            expectEqual(book.date("published"), date)
            expectEqual(book.data("cover"), Data([0xFF]))
            expectEqual(book.uuid("isbn"), uuid)
            expectEqual(book.json("meta"), .object(["a": .int(1)]))
            expectNil(book.string("pages"))  // wrong type reads as nil
            book["price", as: Double.self] = nil
            expectEqual(book["price"], .null)
        }
    }

    @Test func settingAToOneUpdatesBothSidesAndTheOldTarget() throws {
        let fixture = try ContextFixture(.inMemory)
        let context = fixture.makeContext()
        context.performAndWait {
            let first = context.makeDevice("first")
            let second = context.makeDevice("second")
            let reading = context.makeReading(device: first)
            expectEqual(first.relatedObjects(forKey: "readings"), [reading])
            expectTrue(reading.relatedObject(forKey: "device") === first)

            reading.setRelatedObject(second, forKey: "device")
            expectEmpty(first.relatedObjects(forKey: "readings"))
            expectEqual(second.relatedObjects(forKey: "readings"), [reading])

            reading.setRelatedObject(nil, forKey: "device")
            expectEmpty(second.relatedObjects(forKey: "readings"))
            expectEqual(reading["device"], .null)
        }
    }

    @Test func changingAToManyUpdatesEachMembersToOne() throws {
        let fixture = try ContextFixture(.inMemory)
        let context = fixture.makeContext()
        context.performAndWait {
            let first = context.makeDevice("first")
            let second = context.makeDevice("second")
            let a = context.makeReading(device: nil)
            let b = context.makeReading(device: first)
            second.setRelatedObjects([a, b], forKey: "readings")
            expectTrue(a.relatedObject(forKey: "device") === second)
            expectTrue(b.relatedObject(forKey: "device") === second)
            expectEmpty(first.relatedObjects(forKey: "readings"))
            second.removeRelatedObject(a, forKey: "readings")
            expectEqual(a["device"], .null)
            first.addRelatedObject(a, forKey: "readings")
            expectTrue(a.relatedObject(forKey: "device") === first)
        }
    }

    @Test func manyToManyAndOneToOneKeepTheirInversesInSync() throws {
        let fixture = try ContextFixture(.inMemory, model: TestModels.library)
        let context = fixture.makeContext()
        context.performAndWait {
            let book = context.insert(entity: "Book")
            let author = context.insert(entity: "Author")
            let coauthor = context.insert(entity: "Author")
            book.setRelatedObjects([author, coauthor], forKey: "authors")
            expectEqual(author.relatedObjects(forKey: "books"), [book])
            expectEqual(coauthor.relatedObjects(forKey: "books"), [book])
            author.removeRelatedObject(book, forKey: "books")
            expectEqual(book.relatedObjects(forKey: "authors"), [coauthor])

            let portrait = context.insert(entity: "Portrait")
            author.setRelatedObject(portrait, forKey: "portrait")
            expectTrue(portrait.relatedObject(forKey: "author") === author)
            coauthor.setRelatedObject(portrait, forKey: "portrait")
            expectTrue(portrait.relatedObject(forKey: "author") === coauthor)
            expectEqual(author["portrait"], .null)
        }
    }

    @Test(arguments: StoreFactory.all)
    func relationshipsSurviveTheSaveOnBothSides(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory, model: TestModels.library)
        let context = fixture.makeContext()
        let (bookID, authorIDs) = try context.performAndWait {
            let shelf = context.insert(entity: "Shelf")
            shelf["name", as: String.self] = "sci-fi"
            let book = context.insert(entity: "Book")
            book["title", as: String.self] = "Dune"
            book.setRelatedObject(shelf, forKey: "shelf")
            let authors = (0..<2).map { i in
                let author = context.insert(entity: "Author")
                author["name", as: String.self] = "a\(i)"
                author.addRelatedObject(book, forKey: "books")
                return author
            }
            try context.save()
            expectEqual(shelf.relatedObjects(forKey: "books"), [book])
            return (book.objectID, authors.map(\.objectID))
        }
        let snapshot = try #require(try fixture.store.snapshot(bookID))
        expectEqual(snapshot.values["authors"], .references(authorIDs.sorted()))
        let reader = fixture.makeContext("reader")
        try reader.performAndWait {
            let book = try reader.existingObject(with: bookID)
            expectEqual(book.relatedObjects(forKey: "authors").map(\.objectID), authorIDs.sorted())
            expectEqual(book.relatedObject(forKey: "shelf")?.relatedObjects(forKey: "books"), [book])
            let author = book.relatedObjects(forKey: "authors")[0]
            expectEqual(author.relatedObjects(forKey: "books"), [book])
            // Change one side in a later save: the store updates the other side.
            author.removeRelatedObject(book, forKey: "books")
            try reader.save()
        }
        try expectEqual(fixture.store.snapshot(bookID)?.values["authors"], .references([authorIDs.sorted()[1]]))
    }

    @Test(arguments: StoreFactory.all)
    func movingAReadingToAnotherDeviceIsSavedOnEverySide(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let ids = try fixture.seedDevices(2, readingsEach: 1)
        let context = fixture.makeContext()
        let readingID = try context.performAndWait {
            let first = context.object(with: ids[0])
            let second = context.object(with: ids[1])
            let reading = first.relatedObjects(forKey: "readings")[0]
            second.addRelatedObject(reading, forKey: "readings")
            expectEmpty(first.relatedObjects(forKey: "readings"))
            try context.save()
            expectTrue(first.version == 2 && second.version == 2 && reading.version == 2)
            return reading.objectID
        }
        try expectEqual(fixture.store.snapshot(readingID)?.values["device"], .reference(ids[1]))
        try expectEqual(fixture.store.snapshot(ids[0])?.values["readings"], .references([]))
        try expectEqual(fixture.store.snapshot(ids[1])?.values["readings"]?.referencedIDCount, 2)
    }
}

extension PropertyValue {
    var referencedIDCount: Int {
        if case .references(let ids) = self { return ids.count }
        return 0
    }
}
