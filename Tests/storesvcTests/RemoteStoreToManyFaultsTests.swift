import Foundation
import TestSupport
import Testing

@testable import ContextBusClient
@testable import ContextBusObjectGraph

/// An `ObjectContext` over a `RemoteStore` faults to-many relationships as over a local store: fetches and fired
/// faults ask `storesvc` for `"toMany":"faults"`, and a relationship's members cross the wire only when used.
struct RemoteStoreToManyFaultsTests {
    /// The request `devicesvc`'s recorder makes for a device.
    private static func deviceRequest(_ address: String) throws -> FetchRequest {
        FetchRequest(
            entity: "Device", predicate: try ObjectPredicate(format: "address == $address"),
            arguments: ["address": .string(address)], fetchLimit: 1)
    }

    /// Saves a device with `address` and `count` readings through `context`; returns their IDs.
    private static func saveDevice(
        _ address: String, readings count: Int, in context: ObjectContext
    ) throws -> (device: ObjectID, readings: [ObjectID]) {
        try context.performAndWait { () throws -> (ObjectID, [ObjectID]) in
            let device = context.insert(entity: "Device")
            device["address", as: String.self] = address
            let readings = (0..<count).map { context.insertReading(UInt8($0), device: device) }
            try context.save()
            return (device.objectID, readings.map(\.objectID))
        }
    }

    /// Saves one more reading of `device` through `context`; returns its ID and the transaction.
    private static func saveReading(of device: ObjectID, in context: ObjectContext) throws -> ObjectID {
        try context.performAndWait { () throws -> ObjectID in
            let reading = context.insertReading(9, device: try context.existingObject(with: device))
            try context.save()
            return reading.objectID
        }
    }

    @Test func aFetchedDeviceReadsItsReadingsOnlyWhenUsedWithPendingAndLaterRemoteOnes() async throws {
        let service = try await onThread { try StoreServiceProcess.start() }
        defer { service.destroy() }
        let writerStore = try await service.remoteStore("writer")
        defer { writerStore.close() }
        let readerStore = try await RemoteStore.open(
            socketPath: service.socketPath, options: RemoteStore.Options(clientName: "reader", changeStream: .off))
        defer { readerStore.close() }
        let writer = ObjectContext(store: writerStore, name: "writer")
        let reader = ObjectContext(store: readerStore, name: "reader")
        let saved = try await onThread { try Self.saveDevice("AA:30", readings: 2, in: writer) }

        // The recorder's fetch, and a reading inserted in the context: the device's readings are not read.
        reader.mergePolicy = .objectTrump
        let (address, pending) = try await onThread {
            try reader.performAndWait { () throws -> (String?, ObjectID) in
                let device = try #require(try reader.fetch(Self.deviceRequest("AA:30")).first)
                return (device.string("address"), reader.insertReading(7, device: device).objectID)
            }
        }
        expectEqual(address, "AA:30")
        // A reading saved in another process after the fetch: a fault reads it, an array fetched with the device
        // would not hold it (the reader merges no changes).
        let remote = try await onThread { try Self.saveReading(of: saved.device, in: writer) }
        let requestsBefore = readerStore.client.requestsSent
        let members = try await onThread {
            try reader.performAndWait {
                Set(try reader.existingObject(with: saved.device).relatedObjects(forKey: "readings").map(\.objectID))
            }
        }
        expectEqual(members, Set(saved.readings + [remote, pending]))
        expectEqual(readerStore.client.requestsSent, requestsBefore + 1)

        // Saved, the pending reading becomes permanent and the set stays what the store holds.
        let (afterSave, stored) = try await onThread { () throws -> ([ObjectID], PropertyValue?) in
            let afterSave = try reader.performAndWait { () throws -> [ObjectID] in
                try reader.save()
                return try reader.existingObject(with: saved.device).relatedObjects(forKey: "readings")
                    .map(\.objectID)
            }
            let stored = try readerStore.objects(with: [saved.device]).objects.first?.values["readings"]
            return (afterSave, stored)
        }
        expectEqual(afterSave.count, 4)
        expectTrue(afterSave.allSatisfy { !$0.isTemporary })
        expectEqual(stored, .references(afterSave))
    }

    @Test func aFiredFaultLeavesReadingsForALaterRequest() async throws {
        let service = try await onThread { try StoreServiceProcess.start() }
        defer { service.destroy() }
        let store = try await service.remoteStore("reader")
        defer { store.close() }
        let saved = try await onThread {
            try Self.saveDevice("AA:31", readings: 3, in: ObjectContext(store: store, name: "writer"))
        }
        let context = ObjectContext(store: store, name: "reader")
        let (address, members, requests) = try await onThread { () throws -> (String?, [ObjectID], [Int64]) in
            try context.performAndWait { () throws -> (String?, [ObjectID], [Int64]) in
                let device = context.object(with: saved.device)
                let before = store.client.requestsSent
                let address = device.string("address")
                let afterAttribute = store.client.requestsSent
                let members = device.relatedObjects(forKey: "readings").map(\.objectID)
                return (address, members, [before, afterAttribute, store.client.requestsSent])
            }
        }
        expectEqual(address, "AA:31")
        expectEqual(members, saved.readings)
        // One `store.get` (faults) fires the object's fault, one more (whole arrays) the readings' fault.
        expectEqual(requests[1], requests[0] + 1)
        expectEqual(requests[2], requests[1] + 1)
    }

    @Test func aDeviceWithFaultedReadingsMergesARemoteReading() async throws {
        let service = try await onThread { try StoreServiceProcess.start() }
        defer { service.destroy() }
        let contexts = try await service.writerAndReader()
        defer { contexts.close() }
        let (writer, reader, writerStore, readerStore) = (
            contexts.writer, contexts.reader, contexts.writerStore, contexts.readerStore
        )
        let saved = try await onThread { try Self.saveDevice("AA:32", readings: 1, in: writer) }
        try await onThread {
            try reader.performAndWait { _ = try #require(try reader.fetch(Self.deviceRequest("AA:32")).first) }
        }
        let remote = try await onThread { try Self.saveReading(of: saved.device, in: writer) }
        let lastTxn = writerStore.lastTransaction
        #expect(try await eventuallyAsync { readerStore.lastDeliveredTransaction >= lastTxn })
        let (members, version) = try await onThread {
            try reader.performAndWait { () throws -> ([ObjectID], Int64) in
                let device = try reader.existingObject(with: saved.device)
                return (device.relatedObjects(forKey: "readings").map(\.objectID), device.version)
            }
        }
        expectEqual(members, saved.readings + [remote])
        expectEqual(version, 2)
    }
}
