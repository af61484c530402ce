import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph

/// Batches (`BatchRequest`): every matching object changed or deleted in one transaction, as a save of those objects
/// would (docs/protocol.md, "store.batch"), against every store.
struct StoreBatchTests {
    /// Five books, titled b1…b5 with 1…5 pages, on one shelf whose delete rule is `deny`.
    private func library(_ factory: StoreFactory) throws -> (store: TestStore, shelf: ObjectID, books: [ObjectID]) {
        let store = try factory.make(TestModels.library)
        let shelf = try store.insert("Shelf", ["name": .string("main")])
        var books: [ObjectID] = []
        for n in 1...5 {
            books.append(
                try store.insert(
                    "Book", ["title": .string("b\(n)"), "pages": .int(Int64(n)), "shelf": .reference(shelf)]))
        }
        return (store, shelf, books)
    }

    private func pages(over minimum: Int64) throws -> ObjectPredicate {
        try ObjectPredicate(format: "pages > \(minimum)")
    }

    @Test(arguments: StoreFactory.all)
    func aSetChangesEveryMatchingObjectInOneTransactionVisibleAsASave(factory: StoreFactory) throws {
        let (store, _, books) = try library(factory)
        let before = store.lastTransaction
        let result = try store.batch(
            BatchRequest(
                entity: "Book", where: try pages(over: 3), action: .set(["inPrint": .bool(false)]), author: "sweep"))
        expectEqual(result.count, 2)
        expectEqual(result.txn, before + 1)
        let changes = try #require(result.changes)
        expectEqual(changes.updated.map(\.snapshot.id), [books[3], books[4]])
        expectEqual(changes.updated.map(\.changedKeys), [["inPrint"], ["inPrint"]])
        expectEqual(changes.updated.map(\.snapshot.version), [2, 2])
        expectEqual(try store.snapshot(books[0])?.values["inPrint"], .bool(true))
        expectEqual(try store.snapshot(books[4])?.values["inPrint"], .bool(false))
        let history = try #require(try store.history(since: before, limit: 10).first)
        expectEqual(history.author, "sweep")
        expectEqual(history.updated.map(\.snapshot.id), [books[3], books[4]])
    }

    @Test(arguments: StoreFactory.all)
    func aDeleteAppliesDeleteRulesAndADenyFailsTheWholeBatch(factory: StoreFactory) throws {
        let (store, shelf, books) = try library(factory)
        let before = store.lastTransaction
        // The shelf's books deny its delete: nothing is deleted.
        let error = storeError { try store.batch(BatchRequest(entity: "Shelf", action: .delete)) }
        guard case .validation(let failures)? = error else {
            Issue.record("expected a validation failure, got \(String(describing: error))")
            return
        }
        expectEqual(failures.map(\.key), ["books"])
        expectEqual(store.lastTransaction, before)
        // Deleting books nullifies the shelf's side.
        let result = try store.batch(BatchRequest(entity: "Book", where: try pages(over: 1), action: .delete))
        expectEqual(result.count, 4)
        let changes = try #require(result.changes)
        expectEqual(changes.deleted.map(\.id), Array(books[1...]))
        expectEqual(changes.updated.map(\.snapshot.id), [shelf])
        expectEqual(try store.all("Book").map(\.id), [books[0]])
        expectEqual(try store.snapshot(shelf)?.values["books"], .references([books[0]]))
    }

    @Test(arguments: StoreFactory.all)
    func aBatchThatMatchesNothingWritesNothing(factory: StoreFactory) throws {
        let (store, _, _) = try library(factory)
        let before = store.lastTransaction
        let result = try store.batch(BatchRequest(entity: "Book", where: try pages(over: 99), action: .delete))
        expectEqual(result, BatchResult(txn: nil, count: 0, changes: nil))
        expectEqual(store.lastTransaction, before)
    }

    @Test(arguments: StoreFactory.all)
    func aSetIsValidatedLikeAnUpdateAndChangesNothingWhenItFails(factory: StoreFactory) throws {
        let (store, _, books) = try library(factory)
        let wrongType = storeError {
            try store.batch(BatchRequest(entity: "Book", action: .set(["pages": .string("many")])))
        }
        guard case .validation(let failures)? = wrongType else {
            Issue.record("expected a validation failure, got \(String(describing: wrongType))")
            return
        }
        expectEqual(Set(failures.compactMap(\.id)), Set(books))
        let missingShelf = storeError {
            try store.batch(BatchRequest(entity: "Book", action: .set(["shelf": .reference(oid("Shelf", 99))])))
        }
        guard case .validation? = missingShelf else {
            Issue.record("expected a validation failure, got \(String(describing: missingShelf))")
            return
        }
        expectEqual(
            storeError { try store.batch(BatchRequest(entity: "Book", action: .set(["colour": .string("red")]))) },
            .invalidRequest(field: "set.colour", message: "Book has no property 'colour'"))
        expectEqual(
            storeError { try store.batch(BatchRequest(entity: "Nope", action: .delete)) },
            .invalidRequest(field: "entity", message: "unknown entity 'Nope'"))
        expectEqual(try store.snapshot(books[0])?.version, 1)
    }

    @Test(arguments: StoreFactory.all)
    func aContextMergesWhatItsBatchChanged(factory: StoreFactory) throws {
        let (store, _, books) = try library(factory)
        let context = ObjectContext(store: store, name: "cleaner")
        try context.performAndWait {
            let first = try context.existingObject(with: books[0])
            let last = try context.existingObject(with: books[4])
            expectEqual(last.bool("inPrint"), true)
            let result = try context.execute(
                BatchRequest(entity: "Book", where: try pages(over: 3), action: .set(["inPrint": .bool(false)])))
            expectEqual(result.count, 2)
            expectEqual(last.bool("inPrint"), false)
            expectEqual(last.version, 2)
            expectEqual(first.bool("inPrint"), true)
            try context.execute(BatchRequest(entity: "Book", where: try pages(over: 4), action: .delete))
            expectNil(context.registeredObject(for: books[4]))
        }
    }

    /// A batch is not invisible (docs/protocol.md, "store.batch"): another context that merges the store's changes
    /// takes a batch's new values and lets its deleted objects go, as after any save.
    @Test(arguments: StoreFactory.all)
    func anotherContextMergesABatchLikeAnySave(factory: StoreFactory) throws {
        let (store, _, books) = try library(factory)
        let reader = ObjectContext(store: store, name: "reader")
        reader.automaticallyMergesChanges = true
        let thick = try reader.performAndWait {
            _ = try reader.existingObject(with: books[4])
            return try reader.existingObject(with: books[3])
        }
        let cleaner = ObjectContext(store: store, name: "cleaner")
        try cleaner.performAndWait {
            try cleaner.execute(
                BatchRequest(entity: "Book", where: try pages(over: 3), action: .set(["inPrint": .bool(false)])))
            try cleaner.execute(BatchRequest(entity: "Book", where: try pages(over: 4), action: .delete))
        }
        let deadline = ContinuousClock.now + .seconds(30)
        func merged() -> Bool {
            reader.performAndWait { reader.registeredObject(for: books[4]) == nil && thick.bool("inPrint") == false }
        }
        while !merged() && ContinuousClock.now < deadline { usleep(1_000) }
        reader.performAndWait {
            expectEqual(thick.bool("inPrint"), false)
            expectEqual(thick.version, 2)
            expectNil(reader.registeredObject(for: books[4]))
        }
    }

    /// Items point at an owner (whose `items` is to-many) and at a badge (one-to-one); neither rule reaches further
    /// than the other side, so a batch delete of items is planned as one set and written with one `DELETE … WHERE`.
    static let itemModel: Model = try! Model(entities: [
        EntityDescription(
            name: "Item",
            attributes: [
                AttributeDescription("size", .int), AttributeDescription("label", .string, optional: true),
                AttributeDescription("seen", .date, optional: true),
            ],
            relationships: [
                RelationshipDescription("owner", destination: "Owner", inverse: "items"),
                RelationshipDescription("badge", destination: "Badge", inverse: "item"),
            ]),
        EntityDescription(
            name: "Owner", attributes: [AttributeDescription("name", .string)],
            relationships: [RelationshipDescription("items", destination: "Item", toMany: true, inverse: "owner")]),
        EntityDescription(
            name: "Badge", attributes: [AttributeDescription("code", .string)],
            relationships: [RelationshipDescription("item", destination: "Item", inverse: "badge")]),
    ])

    /// Two stores with the same 3 owners and 40 items (some with a badge), from `seed`.
    private func twoItemStores(_ factory: StoreFactory, seed: UInt64) throws -> (TestStore, TestStore) {
        let stores = (try factory.make(Self.itemModel), try factory.make(Self.itemModel))
        for store in [stores.0, stores.1] {
            var generator = SeededRandom(seed: seed)
            let owners = try (0..<3).map { try store.insert("Owner", ["name": .string("o\($0)")]) }
            for n in 0..<40 {
                var values: [String: PropertyValue] = [
                    "size": .int(Int64(generator.int(10))),
                    "label": generator.coin() ? .string("l\(generator.int(3))") : .null,
                ]
                if generator.int(4) > 0 { values["owner"] = .reference(owners[generator.int(3)]) }
                if generator.coin() { values["seen"] = .date(Date(timeIntervalSince1970: Double(n))) }
                let item = try store.insert("Item", values)
                if generator.int(3) == 0 {
                    try store.insert("Badge", ["code": .string("b\(n)"), "item": .reference(item)])
                }
            }
        }
        return stores
    }

    private static let itemPredicates = [
        "size < 4", "label == 'l1' OR owner == nil", "owner.name == 'o2' AND size > 2", "TRUEPREDICATE",
    ]

    /// The two stores hold the same objects, and their change sets and history after `before` are the same but for
    /// the commit times.
    private func expectSameOutcome(
        _ batched: TestStore, _ batchChanges: ChangeSet?, _ saved: TestStore, _ saveChanges: ChangeSet?,
        after before: Int64, _ comment: String
    ) throws {
        var changes = try #require(batchChanges, "\(comment)")
        let expected = try #require(saveChanges, "\(comment)")
        changes.time = expected.time
        expectEqual(changes, expected, "\(comment)")
        var history = try batched.history(since: before, limit: 10)
        let expectedHistory = try saved.history(since: before, limit: 10)
        for i in history.indices where i < expectedHistory.count { history[i].time = expectedHistory[i].time }
        expectEqual(history, expectedHistory, "\(comment)")
        for entity in ["Item", "Owner", "Badge"] {
            expectEqual(try batched.all(entity), try saved.all(entity), "\(comment): \(entity)")
        }
    }

    /// A batch delete is exactly the save of its objects' deletes: the same change set (deleted snapshots, the
    /// owners and badges updated with the same keys, versions and previous values), the same history and the same
    /// objects left, in every store, on random data.
    @Test(arguments: StoreFactory.all)
    func aBatchDeleteIsExactlyTheSaveOfItsObjectsDeletes(factory: StoreFactory) throws {
        var random = SeededRandom(seed: 0xB47C)
        for round in 0..<6 {
            let (batched, saved) = try twoItemStores(factory, seed: UInt64(round) + 1)
            let format = Self.itemPredicates[random.int(Self.itemPredicates.count)]
            let predicate = try ObjectPredicate(format: format)
            let before = batched.lastTransaction
            let result = try batched.batch(BatchRequest(entity: "Item", where: predicate, action: .delete))
            guard
                case .ids(let ids) = try saved.fetch(
                    FetchRequest(entity: "Item", predicate: predicate, resultType: .ids)
                )
                .content
            else { continue }
            expectEqual(result.count, ids.count, "round \(round): \(format)")
            guard !ids.isEmpty else { continue }
            let plain = try saved.commit(SaveRequest(deletes: ids.map { .init(id: $0, version: nil) }))
            try expectSameOutcome(
                batched, result.changes, saved, plain.changes, after: before, "round \(round): \(format)")
        }
    }

    /// A batch `set` is exactly the save of its objects' updates: objects it leaves as they were are not updated,
    /// the others get the same versions, changed keys and previous values, in every store, on random data.
    @Test(arguments: StoreFactory.all)
    func aBatchSetIsExactlyTheSaveOfItsObjectsUpdates(factory: StoreFactory) throws {
        var random = SeededRandom(seed: 0x5E7)
        for round in 0..<8 {
            let (batched, saved) = try twoItemStores(factory, seed: UInt64(round) + 11)
            let format = Self.itemPredicates[random.int(Self.itemPredicates.count)]
            let predicate = try ObjectPredicate(format: format)
            var values: [String: PropertyValue] = [:]
            if random.coin() { values["size"] = random.coin() ? .int(Int64(random.int(10))) : .int(3) }
            if random.coin() { values["label"] = random.coin() ? .string("l\(random.int(3))") : .null }
            if random.coin() || values.isEmpty {
                values["seen"] = random.coin() ? .date(Date(timeIntervalSince1970: Double(random.int(40)))) : .null
            }
            let before = batched.lastTransaction
            let result = try batched.batch(BatchRequest(entity: "Item", where: predicate, action: .set(values)))
            guard
                case .ids(let ids) = try saved.fetch(
                    FetchRequest(entity: "Item", predicate: predicate, resultType: .ids)
                )
                .content
            else { continue }
            expectEqual(result.count, ids.count, "round \(round): \(format)")
            let plain = try saved.commit(SaveRequest(updates: ids.map { .init(id: $0, version: nil, values: values) }))
            let comment = "round \(round): \(format) set \(values)"
            if plain.changes?.isEmpty ?? true {
                expectEqual(batched.lastTransaction, before, "\(comment)")
                expectTrue(result.changes?.isEmpty ?? true, "\(comment)")
                continue
            }
            try expectSameOutcome(batched, result.changes, saved, plain.changes, after: before, comment)
        }
    }
}
