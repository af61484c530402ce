import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph

/// Sorting, limits, offsets and result types, against every store.
struct StoreFetchTests {
    private func books(_ store: any PersistentStore) throws -> [String: ObjectID] {
        let s1 = try store.insert("Shelf", ["name": .string("B")])
        let s2 = try store.insert("Shelf", ["name": .string("A")])
        var ids: [String: ObjectID] = [:]
        let rows: [(String, PropertyValue, ObjectID?)] = [
            ("d", .double(2), s1), ("a", .null, s2), ("c", .double(1), nil), ("b", .double(2), s2), ("e", .null, s1),
        ]
        for (title, price, shelf) in rows {
            ids[title] = try store.insert(
                "Book", ["title": .string(title), "price": price, "shelf": shelf.map(PropertyValue.reference) ?? .null])
        }
        return ids
    }

    private func titles(_ store: any PersistentStore, _ request: FetchRequest) throws -> [String] {
        guard case .objects(let objects) = try store.fetch(request).content else { return [] }
        return objects.map { $0.values["title"]?.description ?? "?" }.map {
            $0.replacingOccurrences(of: "\"", with: "")
        }
    }

    @Test(arguments: StoreFactory.all)
    func sortsPutNilFirstAscendingAndBreakTiesByID(factory: StoreFactory) throws {
        let store = try factory.make(TestModels.library)
        _ = try books(store)
        expectEqual(
            try titles(store, FetchRequest(entity: "Book", sortDescriptors: [ObjectSortDescriptor("price")])),
            [
                "a", "e", "c", "d", "b",
            ])
        expectEqual(
            try titles(
                store, FetchRequest(entity: "Book", sortDescriptors: [ObjectSortDescriptor("price", ascending: false)])),
            ["d", "b", "c", "a", "e"])
        expectEqual(
            try titles(
                store,
                FetchRequest(
                    entity: "Book",
                    sortDescriptors: [ObjectSortDescriptor("shelf.name"), ObjectSortDescriptor("title")])),
            ["c", "a", "b", "d", "e"])
    }

    @Test(arguments: StoreFactory.all)
    func limitOffsetAndResultTypes(factory: StoreFactory) throws {
        let store = try factory.make(TestModels.library)
        let ids = try books(store)
        let sort = [ObjectSortDescriptor("title")]
        expectEqual(
            try titles(store, FetchRequest(entity: "Book", sortDescriptors: sort, fetchLimit: 2, fetchOffset: 1)),
            [
                "b", "c",
            ])
        let idResult = try store.fetch(
            FetchRequest(entity: "Book", sortDescriptors: sort, fetchLimit: 2, resultType: .ids))
        expectEqual(idResult.content, .ids([ids["a"]!, ids["b"]!]))
        expectEqual(idResult.txn, store.lastTransaction)
        try expectEqual(store.fetch(FetchRequest(entity: "Book", resultType: .count)).content, .count(5))
        expectEqual(
            try store.fetch(FetchRequest(entity: "Book", fetchLimit: 3, fetchOffset: 1, resultType: .count)).content,
            .count(3))
        try expectEqual(
            store.fetch(FetchRequest(entity: "Book", fetchOffset: 9, resultType: .count)).content, .count(0))
    }

    @Test(arguments: StoreFactory.all)
    func badFetchRequestsNameTheField(factory: StoreFactory) throws {
        let store = try factory.make(TestModels.library)
        expectEqual(
            storeError { _ = try store.fetch(FetchRequest(entity: "Nope")) },
            .invalidRequest(field: "entity", message: "unknown entity 'Nope'"))
        let error = storeError {
            _ = try store.fetch(FetchRequest(entity: "Book", sortDescriptors: [ObjectSortDescriptor("authors.name")]))
        }
        guard case .invalidRequest(let field, _)? = error else { throw error ?? StoreError.unavailable("") }
        expectEqual(field, "sort[0].key")
        let error2 = storeError { _ = try store.fetch(FetchRequest(entity: "Book", fetchLimit: -1)) }
        guard case .invalidRequest(let field2, _)? = error2 else { throw error2 ?? StoreError.unavailable("") }
        expectEqual(field2, "limit")
    }

    @Test(arguments: StoreFactory.all)
    func objectsWithIDsListsTheMissingOnes(factory: StoreFactory) throws {
        let store = try factory.make(TestModels.library)
        let id = try store.insert("Shelf", ["name": .string("s")])
        let result = try store.objects(with: [id, oid("Shelf", 42), tmp("Shelf", "t"), oid("Nope", 1)])
        expectEqual(result.objects.map(\.id), [id])
        expectEqual(result.missing, [oid("Shelf", 42), tmp("Shelf", "t"), oid("Nope", 1)])
        expectEqual(result.txn, 1)
    }

    @Test(arguments: StoreFactory.all)
    func predicatesFilterWithBoundArgumentsAndToOneKeyPaths(factory: StoreFactory) throws {
        let store = try factory.make(TestModels.library)
        _ = try books(store)
        let cheap = try ObjectPredicate(format: "price <= $max OR price == nil")
        expectEqual(
            try titles(
                store,
                FetchRequest(
                    entity: "Book", predicate: cheap, arguments: ["max": .double(1.5)],
                    sortDescriptors: [ObjectSortDescriptor("title")])), ["a", "c", "e"])
        let onShelfA = try ObjectPredicate(format: "shelf.name == 'A'")
        expectEqual(
            try titles(
                store,
                FetchRequest(entity: "Book", predicate: onShelfA, sortDescriptors: [ObjectSortDescriptor("title")])),
            ["a", "b"])
        expectEqual(
            try store.fetch(FetchRequest(entity: "Book", predicate: onShelfA, resultType: .count)).content, .count(2))
    }

    @Test(arguments: StoreFactory.all)
    func predicatesThatDoNotFitTheModelAreInvalidWhere(factory: StoreFactory) throws {
        let store = try factory.make(TestModels.library)
        let unbound = storeError {
            _ = try store.fetch(FetchRequest(entity: "Book", predicate: try ObjectPredicate(format: "pages > $min")))
        }
        guard case .invalidRequest(let field, _)? = unbound else { throw unbound ?? StoreError.unavailable("") }
        expectEqual(field, "where")
        let unknownKey = storeError {
            _ = try store.fetch(FetchRequest(entity: "Book", predicate: try ObjectPredicate(format: "colour == 'red'")))
        }
        guard case .invalidRequest(let field2, _)? = unknownKey else { throw unknownKey ?? StoreError.unavailable("") }
        expectEqual(field2, "where")
    }
}
