import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph

/// Inserts, updates, deletes, defaults and validation, against every store.
struct StoreSaveTests {
    @Test(arguments: StoreFactory.all)
    func insertGetsPermanentIDVersionOneAndDefaults(factory: StoreFactory) throws {
        let store = try factory.make(TestModels.library)
        let ref = tmp("Book", "b1")
        let result = try store.commit(SaveRequest(inserts: [.init(id: ref, values: ["title": .string("Dune")])]))
        let id = try #require(result.ids[ref])
        expectTrue(!id.isTemporary && id.entity == "Book")
        expectEqual(result.versions, [id: 1])
        expectTrue(result.txn == 1 && store.lastTransaction == 1)
        let snapshot = try #require(try store.snapshot(id))
        expectEqual(snapshot.version, 1)
        expectEqual(snapshot.values["title"], .string("Dune"))
        expectEqual(snapshot.values["pages"], .int(0))
        expectEqual(snapshot.values["inPrint"], .bool(true))
        expectEqual(snapshot.values["price"], .null)
        expectEqual(snapshot.values["shelf"], .null)
        expectEqual(snapshot.values["authors"], .references([]))
        expectEqual(result.changes!.inserted, [snapshot])
    }

    @Test(arguments: StoreFactory.all)
    func everyAttributeTypeRoundTrips(factory: StoreFactory) throws {
        let store = try factory.make(TestModels.library)
        let values: [String: PropertyValue] = [
            "title": .string("naïve \"quoted\" ✓"), "pages": .int(Int64.max), "price": .double(-0.125),
            "inPrint": .bool(false), "published": .date(Date(timeIntervalSince1970: 1_700_000_000.25)),
            "cover": .binary(Data([0, 1, 2, 255])),
            "isbn": .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!),
            "meta": .json(.object(["a": .array([.int(1), .double(2.5), .null, .string("x")]), "b": .bool(true)])),
        ]
        let id = try store.insert("Book", values)
        let snapshot = try #require(try store.snapshot(id))
        for (key, value) in values { expectEqual(snapshot.values[key], value, "\(key)") }
    }

    @Test(arguments: StoreFactory.all)
    func updateBumpsVersionAndReportsChangedKeysWithPreviousValues(factory: StoreFactory) throws {
        let store = try factory.make(TestModels.library)
        let id = try store.insert("Book", ["title": .string("Dune"), "pages": .int(412)])
        let result = try store.commit(
            SaveRequest(updates: [.init(id: id, version: 1, values: ["pages": .int(500), "title": .string("Dune")])]))
        expectEqual(result.txn, 2)
        expectEqual(result.versions, [id: 2])
        let update = try #require(result.changes!.updated.first)
        expectEqual(update.snapshot.version, 2)
        expectEqual(update.changedKeys, ["pages"])
        expectEqual(update.previousValues, ["pages": .int(412)])
        expectEqual(update.snapshot.values["title"], .string("Dune"))
        try expectEqual(store.snapshot(id)?.values["pages"], .int(500))
        try expectEqual(store.snapshot(id)?.version, 2)
    }

    @Test(arguments: StoreFactory.all)
    func deleteRemovesTheObjectAndReportsItsLastValues(factory: StoreFactory) throws {
        let store = try factory.make(TestModels.library)
        let id = try store.insert("Book", ["title": .string("Dune")])
        let before = try #require(try store.snapshot(id))
        let result = try store.commit(SaveRequest(deletes: [.init(id: id, version: 1)]))
        expectEqual(result.changes!.deleted, [before])
        try expectEqual(store.objects(with: [id]).missing, [id])
        expectTrue(try store.all("Book").isEmpty)
    }

    @Test(arguments: StoreFactory.all)
    func idsAreNeverReusedAfterADelete(factory: StoreFactory) throws {
        let store = try factory.make(TestModels.library)
        let first = try store.insert("Book", ["title": .string("a")])
        try store.commit(SaveRequest(deletes: [.init(id: first, version: nil)]))
        let second = try store.insert("Book", ["title": .string("b")])
        expectGreaterThan(second.number!, first.number!)
    }

    @Test(arguments: StoreFactory.all)
    func emptySaveCommitsNothingAndReturnsTheLastTxn(factory: StoreFactory) throws {
        let store = try factory.make(TestModels.library)
        try store.insert("Book", ["title": .string("a")])
        let result = try store.commit(SaveRequest())
        expectTrue(result.txn == 1 && result.changes!.isEmpty && store.lastTransaction == 1)
        try expectEqual(store.history(since: 0, limit: 10).count, 1)
    }

    @Test(arguments: StoreFactory.all)
    func unknownEntityOrKeyIsAnInvalidRequestNamingTheField(factory: StoreFactory) throws {
        let store = try factory.make(TestModels.library)
        let error1 = storeError {
            try store.commit(SaveRequest(inserts: [.init(id: tmp("Nope", "x"), values: [:])]))
        }
        expectEqual(error1, .invalidRequest(field: "insert[0].entity", message: "unknown entity 'Nope'"))
        let error2 = storeError {
            try store.commit(
                SaveRequest(inserts: [
                    .init(id: tmp("Book", "a"), values: ["title": .string("x")]),
                    .init(id: tmp("Book", "b"), values: ["title": .string("x"), "foo": .int(1)]),
                ]))
        }
        guard case .invalidRequest(let field, _)? = error2 else { throw error2 ?? StoreError.unavailable("") }
        expectEqual(field, "insert[1].values.foo")
        let id = try store.insert("Book", ["title": .string("x")])
        let error3 = storeError {
            try store.commit(SaveRequest(updates: [.init(id: id, version: 1, values: ["bar": .null])]))
        }
        guard case .invalidRequest(let field3, _)? = error3 else { throw error3 ?? StoreError.unavailable("") }
        expectEqual(field3, "update[0].values.bar")
        let error4 = storeError { try store.commit(SaveRequest(deletes: [.init(id: tmp("Book", "q"), version: nil)])) }
        guard case .invalidRequest(let field4, _)? = error4 else { throw error4 ?? StoreError.unavailable("") }
        expectEqual(field4, "delete[0].id")
        expectEqual(store.lastTransaction, 1)
    }

    @Test(arguments: StoreFactory.all)
    func wrongValueTypeFailsValidationAndChangesNothing(factory: StoreFactory) throws {
        let store = try factory.make(TestModels.library)
        let book = try store.insert("Book", ["title": .string("x")])
        let before = try store.everything()
        let error = storeError {
            try store.commit(
                SaveRequest(
                    inserts: [.init(id: tmp("Shelf", "s"), values: ["name": .string("ok")])],
                    updates: [.init(id: book, version: 1, values: ["pages": .string("many")])]))
        }
        expectEqual(error, .validation([.init(id: book, key: "pages", reason: "expected a int, got a string")]))
        try expectEqual(store.everything(), before)
        expectEqual(store.lastTransaction, 1)
        // A later save still gets the next txn and the next ID.
        let shelf = try store.insert("Shelf", ["name": .string("s")])
        expectEqual(store.lastTransaction, 2)
        expectGreaterThanOrEqual(shelf.number!, 1)
    }

    @Test(arguments: StoreFactory.all)
    func missingRequiredAttributeFailsValidationNamingTheInsertByItsRef(factory: StoreFactory) throws {
        let store = try factory.make(TestModels.library)
        let ref = tmp("Book", "b7")
        let error = storeError { try store.commit(SaveRequest(inserts: [.init(id: ref, values: ["pages": .int(3)])])) }
        expectEqual(error, .validation([.init(id: ref, key: "title", reason: "is required")]))
        let id = try store.insert("Book", ["title": .string("x")])
        let error2 = storeError {
            try store.commit(SaveRequest(updates: [.init(id: id, version: 1, values: ["title": .null])]))
        }
        expectEqual(error2, .validation([.init(id: id, key: "title", reason: "is required")]))
        try expectEqual(store.snapshot(id)?.values["title"], .string("x"))
    }

    @Test(arguments: StoreFactory.all)
    func hostileValuesAreRefusedWithReasons(factory: StoreFactory) throws {
        let store = try factory.make(TestModels.library)
        let ref = tmp("Book", "h")
        let error = storeError {
            try store.commit(
                SaveRequest(inserts: [
                    .init(
                        id: ref,
                        values: [
                            "title": .string("x"), "price": .double(.nan), "shelf": .references([]),
                            "authors": .reference(oid("Author", 1)),
                        ])
                ]))
        }
        guard case .validation(let failures)? = error else { throw error ?? StoreError.unavailable("") }
        expectEqual(Set(failures.map(\.key)), ["price", "shelf", "authors"])
        expectTrue(failures.allSatisfy { $0.id == ref })
        expectTrue(try store.all("Book").isEmpty)
    }

    @Test(arguments: StoreFactory.all)
    func referenceToAMissingObjectFailsValidation(factory: StoreFactory) throws {
        let store = try factory.make(TestModels.library)
        let ref = tmp("Book", "b")
        let error = storeError {
            try store.commit(
                SaveRequest(inserts: [
                    .init(id: ref, values: ["title": .string("x"), "shelf": .reference(oid("Shelf", 99))])
                ]))
        }
        expectEqual(error, .validation([.init(id: ref, key: "shelf", reason: "Shelf/99 does not exist")]))
        let error2 = storeError {
            try store.commit(
                SaveRequest(inserts: [
                    .init(id: ref, values: ["title": .string("x"), "shelf": .reference(tmp("Shelf", "nope"))])
                ]))
        }
        expectEqual(
            error2, .validation([.init(id: ref, key: "shelf", reason: "Shelf/nope is not inserted by this save")]))
    }

    @Test(arguments: StoreFactory.all)
    func reservedPermanentIDsCanBeUsedForInserts(factory: StoreFactory) throws {
        let store = try factory.make(TestModels.library)
        let reserved = try store.obtainPermanentIDs(entity: "Book", count: 2)
        expectTrue(reserved.count == 2 && reserved[0].number! + 1 == reserved[1].number!)
        let result = try store.commit(SaveRequest(inserts: [.init(id: reserved[1], values: ["title": .string("r")])]))
        expectEqual(result.ids, [reserved[1]: reserved[1]])
        let next = try store.insert("Book", ["title": .string("n")])
        expectGreaterThan(next.number!, reserved[1].number!)
        let error = storeError {
            try store.commit(SaveRequest(inserts: [.init(id: oid("Book", 1000), values: ["title": .string("x")])]))
        }
        guard case .invalidRequest(let field, _)? = error else { throw error ?? StoreError.unavailable("") }
        expectEqual(field, "insert[0].id")
        let again = storeError {
            try store.commit(SaveRequest(inserts: [.init(id: reserved[1], values: ["title": .string("x")])]))
        }
        expectEqual(again, .invalidRequest(field: "insert[0].id", message: "\(reserved[1]) already exists"))
    }
}
