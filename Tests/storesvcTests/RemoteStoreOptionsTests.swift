import Foundation
import TestSupport
import Testing

@testable import ContextBusClient
@testable import ContextBusObjectGraph
@testable import ContextBusWire

/// `RemoteStore.Options` against the real `storesvc` process.
struct RemoteStoreOptionsTests {
    /// The service's subscription count (`store.stats`).
    func subscriptions(of service: StoreServiceProcess) async throws -> Int64 {
        let client = try await service.client("stats")
        defer { client.close() }
        return try await client.call(StoreStats.self).subscriptions
    }

    @Test func aStoreWithoutChangeStreamOpensNoSubscriptionAndStillReadsAndWrites() async throws {
        let service = try await onThread { try StoreServiceProcess.start() }
        defer { service.destroy() }
        let writeOnly = try await RemoteStore.open(
            socketPath: service.socketPath, options: RemoteStore.Options(clientName: "recorder", changeStream: .off))
        defer { writeOnly.close() }
        try await expectEqual(subscriptions(of: service), 0)
        let heard = ChangeRecorder(writeOnly)
        let context = ObjectContext(store: writeOnly, name: "recorder")
        let id = try await onThread { try context.saveDevice("AA:03", name: "written") }
        let read = try await onThread { try writeOnly.objects(with: [id]).objects.first?.values["name"] }
        expectEqual(read, .string("written"))
        expectEqual(writeOnly.lastTransaction, 1)
        // A store that follows changes subscribes; the write-only one still does not.
        let following = try await service.remoteStore("follower")
        defer { following.close() }
        try await expectEqual(subscriptions(of: service), 1)
        expectEmpty(heard.all)
        expectEqual(writeOnly.lastDeliveredTransaction, 0)
    }
}
