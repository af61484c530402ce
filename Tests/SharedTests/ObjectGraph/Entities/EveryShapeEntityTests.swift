import EntityFixtures
import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSQLite

/// The generated types of the every-shape model (`Tests/EntityFixtures`) round-trip through each store: every
/// attribute type, required and optional, and every relationship shape read back as they were written, delete rules
/// and unique keys hold.
struct EveryShapeEntityTests {
    @Test func everyAttributeTypeAndRelationshipShapeRoundTripsThroughSQLiteStore() throws {
        let model = try EveryShapeFixture.model()
        let directory = try TestStore.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("store.sqlite")
        let written: [[String]]
        do {
            let store = try SQLiteStore(url: url, model: model)
            defer { store.close() }
            let context = ObjectContext(store: store, name: "writer")
            written = try context.performAndWait {
                let samples = EveryShapeFixture.insertGraph(in: context)
                try context.save()
                return samples.map(EveryShapeFixture.describe)
            }
        }
        // A store opened afresh on the file: the values come from SQLite, not from memory.
        let store = try SQLiteStore(url: url, model: model)
        defer { store.close() }
        let context = ObjectContext(store: store, name: "reader")
        let read = try context.performAndWait {
            try context.fetch(Sample.fetchRequest(sortedBy: [.text.descending])).map(EveryShapeFixture.describe)
        }
        expectEqual(read, written)
        expectEqual(written[0][0], "text full / maybe")
        expectEqual(written[1][0], "text empty / nil")
    }

    @Test(arguments: StoreFactory.all)
    func uniqueKeysSortKeysAndDeleteRulesWorkThroughTheGeneratedTypes(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory, model: try EveryShapeFixture.model())
        let context = fixture.makeContext()
        try context.performAndWait {
            EveryShapeFixture.insertGraph(in: context)
            try context.save()
            let full = try #require(try Sample.find(token: EveryShapeFixture.fullToken, in: context))
            expectEqual(full.text, "full")
            let folder = try #require(try Folder.find(name: "inbox", in: context))
            expectEqual(try Sample.find(folder: folder, text: "empty", in: context)?.text, "empty")
            expectNil(try Sample.find(folder: folder, text: "none", in: context))
            let byParent = try context.fetch(Sample.fetchRequest(sortedBy: [.parent(.text), .count.descending]))
            expectEqual(byParent.map(\.text), ["full", "empty"])  // no parent (nil) sorts first
            // deny: a folder that still holds samples cannot be deleted.
            context.delete(folder)
            #expect(throws: StoreError.self) { try context.save() }
            context.rollback()
            // cascade: deleting the parent deletes its child and its badge.
            context.delete(full)
            try context.save()
            expectEqual(try context.count(for: Sample.fetchRequest()), 0)
            expectEqual(try context.count(for: Badge.fetchRequest()), 0)
            expectEqual(try context.fetch(Tag.fetchRequest(sortedBy: [.name])).map { $0.samples.count }, [0, 0])
        }
    }
}
