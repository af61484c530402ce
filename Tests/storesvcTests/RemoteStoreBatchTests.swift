import Foundation
import TestSupport
import Testing

@testable import ContextBusClient
@testable import ContextBusObjectGraph

/// Batches through a `RemoteStore` (docs/protocol.md, "store.batch"): `RemoteStore.batch`, and contexts over
/// `RemoteStore`s, the one that executes the batch and another, merging it from the store's change stream.
struct RemoteStoreBatchTests {
    @Test func aRemoteStoreBatchAnswersTheTransactionAndTheCountWithoutTheChangeSet() async throws {
        let service = try await onThread { try StoreServiceProcess.start() }
        defer { service.destroy() }
        let store = try await service.remoteStore()
        defer { store.close() }
        let context = ObjectContext(store: store, name: "seed")
        let ids = try await onThread { try ["AA:01", "AA:02", "BB:01"].map { try context.saveDevice($0) } }
        let renamed = try await onThread {
            try store.batch(
                BatchRequest(
                    entity: "Device", where: try ObjectPredicate(format: "address BEGINSWITH 'AA'"),
                    action: .set(["name": .string("a-side")])))
        }
        expectEqual(renamed.count, 2)
        expectEqual(renamed.txn, 4)
        expectNil(renamed.changes)
        let names = try await onThread { try store.objects(with: ids).objects.map { $0.values["name"] } }
        expectEqual(names, [.string("a-side"), .string("a-side"), .null])
        let none = try await onThread {
            try store.batch(
                BatchRequest(
                    entity: "Device", where: try ObjectPredicate(format: "address == 'CC:01'"), action: .delete))
        }
        expectEqual(none.count, 0)
        expectNil(none.txn)
        let deleted = try await onThread { try store.batch(BatchRequest(entity: "Device", action: .delete)) }
        expectEqual(deleted.count, 3)
        let count = try await onThread { try store.fetch(FetchRequest(entity: "Device", resultType: .count)) }
        expectEqual(count.content, .count(0))
    }

    /// `ObjectContext.execute(_:)` over a `RemoteStore`: the answer has no change set, so the executing context takes
    /// the batch from the store's change stream when it merges automatically, and so does every other context.
    @Test func contextsOverRemoteStoresMergeABatchFromTheChangeStream() async throws {
        let service = try await onThread { try StoreServiceProcess.start() }
        defer { service.destroy() }
        let contexts = try await service.writerAndReader()
        defer { contexts.close() }
        let (writer, reader) = (contexts.writer, contexts.reader)
        writer.automaticallyMergesChanges = true
        let ids = try await onThread { try ["AA:01", "AA:02"].map { try writer.saveDevice($0, name: "old") } }
        // Both contexts hold both devices.
        for context in [writer, reader] {
            let names = try await onThread {
                try context.performAndWait { try ids.map { try context.existingObject(with: $0).string("name") } }
            }
            expectEqual(names, ["old", "old"])
        }
        let result = try await onThread {
            try writer.performAndWait {
                try writer.execute(BatchRequest(entity: "Device", action: .set(["name": .string("new")])))
            }
        }
        expectEqual(result.count, 2)
        for context in [writer, reader] {
            let merged = try await eventuallyAsync {
                context.performAndWait { ids.map { context.registeredObject(for: $0)?.string("name") } }
                    == ["new", "new"]
            }
            expectTrue(merged, "\(context.name ?? "?") merged the batch")
            let versions = context.performAndWait { ids.map { context.registeredObject(for: $0)?.version } }
            expectEqual(versions, [2, 2])
        }
        _ = try await onThread {
            try writer.performAndWait {
                try writer.execute(
                    BatchRequest(
                        entity: "Device", where: try ObjectPredicate(format: "address == 'AA:02'"), action: .delete))
            }
        }
        for context in [writer, reader] {
            let gone = try await eventuallyAsync {
                context.performAndWait { context.registeredObject(for: ids[1]) == nil }
            }
            expectTrue(gone, "\(context.name ?? "?") let the deleted device go")
            expectEqual(context.performAndWait { context.registeredObject(for: ids[0])?.string("name") }, "new")
        }
    }

    /// A context that does not merge automatically keeps what it holds: over a `RemoteStore` its own batch reaches it
    /// only when it reads the object again (documented in `ObjectContext.execute(_:)`).
    @Test func aContextThatDoesNotMergeSeesItsRemoteBatchOnlyWhenItRefreshes() async throws {
        let service = try await onThread { try StoreServiceProcess.start() }
        defer { service.destroy() }
        let store = try await service.remoteStore()
        defer { store.close() }
        let context = ObjectContext(store: store, name: "manual")
        let id = try await onThread { try context.saveDevice("AA:01", name: "old") }
        let fetched = try await onThread {
            try context.performAndWait { () throws -> String? in
                _ = try context.execute(BatchRequest(entity: "Device", action: .set(["name": .string("new")])))
                let device = try #require(context.registeredObject(for: id))
                expectEqual(device.string("name"), "old")
                context.refresh(device, mergeChanges: false)
                return device.string("name")
            }
        }
        expectEqual(fetched, "new")
    }
}
