import Foundation
import TestSupport
import Testing

@testable import ContextBusClient
@testable import ContextBusObjectGraph

/// A `LiveQuery` in a context over a `RemoteStore` follows what other clients of storesvc commit, through the store's
/// change stream: the fetched-results view of Core Data across processes.
struct RemoteStoreLiveQueryTests {
    @Test func aLiveQueryOverARemoteStoreFollowsAnotherClientsSaves() async throws {
        let service = try await onThread { try StoreServiceProcess.start() }
        defer { service.destroy() }
        let contexts = try await service.writerAndReader()
        defer { contexts.close() }
        let query = try LiveQuery(
            FetchRequest(
                entity: "Device", predicate: try ObjectPredicate(format: "name BEGINSWITH 'k'"),
                sortDescriptors: [ObjectSnapshot.sortByName]),
            in: contexts.reader)
        let updates = Locked<[LiveQueryUpdate]>([])
        let disposable = query.updates.startWithValues { update in updates.withLock { $0.append(update) } }
        defer { disposable.dispose() }
        let firstUpdate = try await eventuallyAsync { updates.withLock { $0.count } == 1 }
        expectTrue(firstUpdate)
        let kitchen = try await onThread { try contexts.writer.saveDevice("AA:01", name: "kitchen") }
        _ = try await onThread { try contexts.writer.saveDevice("AA:02", name: "hall") }
        let keller = try await onThread { try contexts.writer.saveDevice("AA:03", name: "keller") }
        let bothListed = try await eventuallyAsync {
            updates.withLock { $0.last?.snapshot.sections.first?.objectIDs } == [keller, kitchen]
        }
        expectTrue(bothListed)
        // A rename moves an object out of the result; the diff says so.
        try await onThread {
            try contexts.writer.performAndWait {
                try contexts.writer.existingObject(with: kitchen)["name", as: String.self] = "lounge"
                try contexts.writer.save()
            }
        }
        let renamedOut = try await eventuallyAsync {
            updates.withLock { $0.last?.snapshot.sections.first?.objectIDs } == [keller]
        }
        expectTrue(renamedOut)
        let last = try #require(updates.withLock { $0.last })
        expectEqual(last.diff?.deleted.map(\.objectID), [kitchen])
    }
}

extension ObjectSnapshot {
    /// Devices by name.
    fileprivate static let sortByName = ObjectSortDescriptor("name")
}
