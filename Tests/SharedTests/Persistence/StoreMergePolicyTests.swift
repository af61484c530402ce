import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph

/// Version checks and the merge policies of `docs/protocol.md`, against every store.
struct StoreMergePolicyTests {
    /// A book at version 2 whose title the store changed from "a" to "b" after the client read it at version 1.
    private func staleBook(_ store: any PersistentStore) throws -> ObjectID {
        let id = try store.insert("Book", ["title": .string("a"), "pages": .int(1)])
        try store.commit(SaveRequest(updates: [.init(id: id, version: 1, values: ["title": .string("b")])]))
        return id
    }

    @Test(arguments: StoreFactory.all)
    func errorPolicyFailsTheWholeSaveListingConflicts(factory: StoreFactory) throws {
        let store = try factory.make(TestModels.library)
        let id = try staleBook(store)
        let current = try #require(try store.snapshot(id))
        let error = storeError {
            try store.commit(
                SaveRequest(
                    inserts: [.init(id: tmp("Shelf", "s"), values: ["name": .string("s")])],
                    updates: [.init(id: id, version: 1, values: ["pages": .int(9)])]))
        }
        expectEqual(error, .conflict([.init(id: id, version: 1, currentVersion: 2, currentValues: current.values)]))
        expectTrue(try store.all("Shelf").isEmpty)
        expectEqual(store.lastTransaction, 2)
    }

    @Test(arguments: [MergePolicy.objectTrump, .overwrite], StoreFactory.all)
    func objectTrumpWritesTheChangedKeysOverTheCurrentObject(policy: MergePolicy, factory: StoreFactory) throws {
        let store = try factory.make(TestModels.library)
        let id = try staleBook(store)
        let result = try store.commit(
            SaveRequest(
                updates: [.init(id: id, version: 1, values: ["pages": .int(9)], original: ["pages": .int(1)])],
                mergePolicy: policy))
        expectEqual(result.versions, [id: 3])
        let snapshot = try #require(try store.snapshot(id))
        expectEqual(snapshot.values["pages"], .int(9))
        expectEqual(snapshot.values["title"], .string("b"))
    }

    @Test(arguments: StoreFactory.all)
    func storeTrumpKeepsTheStoresValueForKeysTheStoreChanged(factory: StoreFactory) throws {
        let store = try factory.make(TestModels.library)
        let id = try staleBook(store)
        try store.commit(
            SaveRequest(
                updates: [
                    .init(
                        id: id, version: 1, values: ["title": .string("client"), "pages": .int(9)],
                        original: ["title": .string("a"), "pages": .int(1)])
                ], mergePolicy: .storeTrump))
        let snapshot = try #require(try store.snapshot(id))
        expectEqual(snapshot.values["title"], .string("b"))
        expectEqual(snapshot.values["pages"], .int(9))
        expectEqual(snapshot.version, 3)
    }

    @Test(arguments: StoreFactory.all)
    func rollbackDropsTheConflictingObjectAndCommitsTheRest(factory: StoreFactory) throws {
        let store = try factory.make(TestModels.library)
        let stale = try staleBook(store)
        let fresh = try store.insert("Book", ["title": .string("fresh")])
        let result = try store.commit(
            SaveRequest(
                updates: [
                    .init(id: stale, version: 1, values: ["pages": .int(9)]),
                    .init(id: fresh, version: 1, values: ["pages": .int(7)]),
                ], mergePolicy: .rollback))
        expectEqual(result.versions, [fresh: 2])
        try expectEqual(store.snapshot(stale)?.values["pages"], .int(1))
        try expectEqual(store.snapshot(fresh)?.values["pages"], .int(7))
    }

    @Test(arguments: StoreFactory.all)
    func versionNilSkipsTheConflictCheck(factory: StoreFactory) throws {
        let store = try factory.make(TestModels.library)
        let id = try staleBook(store)
        try store.commit(SaveRequest(updates: [.init(id: id, version: nil, values: ["pages": .int(4)])]))
        try expectEqual(store.snapshot(id)?.values["pages"], .int(4))
    }

    @Test(arguments: MergePolicy.allCases, StoreFactory.all)
    func deleteOfAMissingObjectIsAConflictOnlyUnderError(policy: MergePolicy, factory: StoreFactory) throws {
        let store = try factory.make(TestModels.library)
        let gone = try store.insert("Book", ["title": .string("gone")])
        try store.commit(SaveRequest(deletes: [.init(id: gone, version: nil)]))
        let other = try store.insert("Book", ["title": .string("other")])
        let request = SaveRequest(
            updates: [.init(id: other, version: 1, values: ["pages": .int(2)])],
            deletes: [.init(id: gone, version: 1), .init(id: oid("Book", 999), version: nil)], mergePolicy: policy)
        if policy == .error {
            let error = storeError { try store.commit(request) }
            expectEqual(
                error,
                .conflict([
                    .init(id: gone, version: 1, currentVersion: nil, currentValues: [:]),
                    .init(id: oid("Book", 999), version: nil, currentVersion: nil, currentValues: [:]),
                ]))
            try expectEqual(store.snapshot(other)?.version, 1)
        } else {
            let result = try store.commit(request)
            expectEmpty(result.changes!.deleted)
            expectEqual(result.versions, [other: 2])
        }
    }

    @Test(arguments: MergePolicy.allCases, StoreFactory.all)
    func updateOfAMissingObjectIsNotFoundUnderEveryPolicy(policy: MergePolicy, factory: StoreFactory) throws {
        let store = try factory.make(TestModels.library)
        try store.insert("Book", ["title": .string("x")])
        let error = storeError {
            try store.commit(
                SaveRequest(
                    inserts: [.init(id: tmp("Shelf", "s"), values: ["name": .string("s")])],
                    updates: [.init(id: oid("Book", 77), version: nil, values: ["pages": .int(1)])],
                    mergePolicy: policy))
        }
        expectEqual(error, .notFound(oid("Book", 77)))
        expectTrue(try store.all("Shelf").isEmpty)
    }

    @Test(arguments: [MergePolicy.objectTrump, .storeTrump, .overwrite], StoreFactory.all)
    func staleDeleteStillDeletesUnderTrumpingPolicies(policy: MergePolicy, factory: StoreFactory) throws {
        let store = try factory.make(TestModels.library)
        let id = try staleBook(store)
        let result = try store.commit(SaveRequest(deletes: [.init(id: id, version: 1)], mergePolicy: policy))
        expectEqual(result.changes!.deleted.map(\.id), [id])
    }
}
