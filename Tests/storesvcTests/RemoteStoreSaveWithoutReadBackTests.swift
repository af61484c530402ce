import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph

/// `RemoteStore.save` gets the committed change set in the answer (`"changes": true`): one `store.save`, no
/// `store.get` read-back (which would carry a device's whole readings array), and the saving context ends in the
/// same state as the store's, whatever the merge policy did.
struct RemoteStoreSaveWithoutReadBackTests {
    @Test func aReadingSavedForAKnownDeviceTakesOneRequestAndJoinsTheDevicesLoadedReadings() async throws {
        let service = try await onThread { try StoreServiceProcess.start() }
        defer { service.destroy() }
        let store = try await service.remoteStore("writer")
        defer { store.close() }
        let context = ObjectContext(store: store, name: "writer")
        let (device, first) = try await onThread {
            try context.performAndWait { () throws -> (ObjectID, ObjectID) in
                let device = context.insert(entity: "Device")
                device["address", as: String.self] = "AA:20"
                let reading = context.insertReading(1, device: device)
                try context.save()
                return (device.objectID, reading.objectID)
            }
        }
        let requestsBefore = store.client.requestsSent
        let second = try await onThread {
            try context.performAndWait { () throws -> ObjectID in
                let device = try context.existingObject(with: device)
                device["name", as: String.self] = "thermo"
                let reading = context.insertReading(2, device: device)
                try context.save()
                return reading.objectID
            }
        }
        expectEqual(store.client.requestsSent, requestsBefore + 1)

        let local = context.performAndWait { () -> [String: PropertyValue]? in
            guard let object = context.registeredObject(for: device), !object.isFault else { return nil }
            var values: [String: PropertyValue] = ["version": .int(object.version)]
            for key in ["address", "name", "readings"] { values[key] = object.value(forKey: key) }
            return values
        }
        expectEqual(local?["readings"], .references([first, second].sorted()))
        // The store agrees, version included.
        let truth = try await onThread { try store.objects(with: [device]).objects.first }
        expectEqual(local?["version"], truth.map { .int($0.version) })
        expectEqual(local?["name"], truth?.values["name"])
        expectEqual(local?["readings"], truth?.values["readings"])
        let reading = context.performAndWait { () -> PropertyValue? in
            context.registeredObject(for: second)?.value(forKey: "device")
        }
        expectEqual(reading, .reference(device))
    }

    @Test func aDeviceInsertedWithItsReadingsHasThemWithoutARead() async throws {
        let service = try await onThread { try StoreServiceProcess.start() }
        defer { service.destroy() }
        let store = try await service.remoteStore("writer")
        defer { store.close() }
        let context = ObjectContext(store: store, name: "writer")
        let requestsBefore = store.client.requestsSent
        let (device, readings) = try await onThread {
            try context.performAndWait { () throws -> (ObjectID, [ObjectID]) in
                let device = context.insert(entity: "Device")
                device["address", as: String.self] = "AA:21"
                let readings = (1...3).map { context.insertReading(UInt8($0), device: device) }
                try context.save()
                return (device.objectID, readings.map(\.objectID))
            }
        }
        expectEqual(store.client.requestsSent, requestsBefore + 1)
        let local = context.performAndWait { context.registeredObject(for: device)?.value(forKey: "readings") }
        expectEqual(local, .references(readings.sorted()))
        let truth = try await onThread { try store.objects(with: [device]).objects.first?.values["readings"] }
        expectEqual(local, truth)
    }

    @Test func aConflictResolvedByStoreTrumpIsReadBackSoTheContextHoldsWhatTheStoreKept() async throws {
        let service = try await onThread { try StoreServiceProcess.start() }
        defer { service.destroy() }
        let store = try await service.remoteStore("writer")
        defer { store.close() }
        let other = try await service.remoteStore("other")
        defer { other.close() }
        let context = ObjectContext(store: store, name: "writer")
        context.mergePolicy = .storeTrump
        let device = try await onThread {
            try context.performAndWait { () throws -> ObjectID in
                let device = context.insert(entity: "Device")
                device["address", as: String.self] = "AA:22"
                device["name", as: String.self] = "old"
                try context.save()
                return device.objectID
            }
        }
        // Another client renames it: the writer's copy is now one version behind.
        let elsewhere = ObjectContext(store: other, name: "other")
        try await onThread {
            try elsewhere.performAndWait {
                try elsewhere.existingObject(with: device)["name", as: String.self] = "theirs"
                try elsewhere.save()
            }
        }
        let requestsBefore = store.client.requestsSent
        try await onThread {
            try context.performAndWait {
                let object = try context.existingObject(with: device)
                object["name", as: String.self] = "mine"
                object["connected", as: Bool.self] = true
                try context.save()
            }
        }
        // The store kept its name and wrote `connected` (storeTrump): the request alone would say "mine". The answer
        // carries the committed change set (`"changes": true`), so the one `store.save` is the only request.
        expectEqual(store.client.requestsSent, requestsBefore + 1)
        let local = context.performAndWait { () -> (String?, PropertyValue?, Int64?) in
            let object = context.registeredObject(for: device)
            return (object?.string("name"), object?.value(forKey: "connected"), object?.version)
        }
        let truth = try await onThread { try store.objects(with: [device]).objects.first }
        expectEqual(truth?.values["name"], .string("theirs"))
        expectEqual(local.0, "theirs")
        expectEqual(local.1, .bool(true))
        expectEqual(local.2, truth?.version)
    }
}
