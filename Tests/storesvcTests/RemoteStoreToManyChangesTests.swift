import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph

/// `RemoteStore`'s change stream with `"toMany":"changes"`: to-many changes made in another process reach a
/// context's loaded relationships from the events alone, with no request.
struct RemoteStoreToManyChangesTests {
    @Test func aReadingSavedElsewhereJoinsAndLeavesDeviceReadingsWithNoRoundTrip() async throws {
        let service = try await onThread { try StoreServiceProcess.start() }
        defer { service.destroy() }
        let contexts = try await service.writerAndReader()
        defer { contexts.close() }
        let (writer, reader, readerStore) = (contexts.writer, contexts.reader, contexts.readerStore)
        let (device, readings) = try await onThread {
            try writer.performAndWait { () throws -> (ObjectID, [ObjectID]) in
                let device = writer.insert(entity: "Device")
                device["address", as: String.self] = "AA:10"
                device["name", as: String.self] = "thermo"
                let readings = (1...2).map { writer.insertReading(UInt8($0), device: device) }
                try writer.save()
                return (device.objectID, readings.map(\.objectID))
            }
        }
        let loaded = try await onThread {
            try reader.performAndWait { try reader.existingObject(with: device).relatedObjects(forKey: "readings") }
                .map(\.objectID)
        }
        expectEqual(loaded, readings)
        let requestsBefore = readerStore.client.requestsSent

        // A reading saved in the writer's process.
        let third = try await onThread {
            try writer.performAndWait { () throws -> ObjectID in
                let reading = writer.insertReading(3, device: try writer.existingObject(with: device))
                try writer.save()
                return reading.objectID
            }
        }
        let joined = try await eventuallyAsync {
            reader.performAndWait { reader.registeredObject(for: device)?.value(forKey: "readings") }
                == .references(readings + [third])
        }
        expectTrue(joined)
        let state = reader.performAndWait { () -> (Int64?, String?, Bool?) in
            let object = reader.registeredObject(for: device)
            return (object?.version, object?.string("address"), object?.isFault)
        }
        expectEqual(state.0, 2)
        expectEqual(state.1, "AA:10")
        expectEqual(state.2, false)

        // A reading deleted in the writer's process leaves the set.
        try await onThread {
            try writer.performAndWait {
                writer.delete(try writer.existingObject(with: readings[0]))
                try writer.save()
            }
        }
        let left = try await eventuallyAsync {
            reader.performAndWait { reader.registeredObject(for: device)?.value(forKey: "readings") }
                == .references([readings[1], third])
        }
        expectTrue(left)
        // The events carried everything: the reader sent no request (no `store.get`, no fault fired).
        expectEqual(readerStore.client.requestsSent, requestsBefore)
        expectEqual(readerStore.lastDeliveredTransaction, 3)
    }

    @Test func aReadingMovedElsewhereLeavesOneDeviceAndJoinsTheOtherWithNoRoundTrip() async throws {
        let service = try await onThread { try StoreServiceProcess.start() }
        defer { service.destroy() }
        let contexts = try await service.writerAndReader()
        defer { contexts.close() }
        let (writer, reader, readerStore) = (contexts.writer, contexts.reader, contexts.readerStore)
        let (lamp, thermo, reading) = try await onThread {
            try writer.performAndWait { () throws -> (ObjectID, ObjectID, ObjectID) in
                let lamp = writer.insert(entity: "Device")
                lamp["address", as: String.self] = "AA:11"
                let thermo = writer.insert(entity: "Device")
                thermo["address", as: String.self] = "AA:12"
                let reading = writer.insertReading(1, device: lamp)
                try writer.save()
                return (lamp.objectID, thermo.objectID, reading.objectID)
            }
        }
        let loaded = try await onThread {
            try reader.performAndWait { () throws -> [Int] in
                let lampReadings = try reader.existingObject(with: lamp).relatedObjects(forKey: "readings").count
                let thermoReadings = try reader.existingObject(with: thermo).relatedObjects(forKey: "readings").count
                _ = try reader.existingObject(with: reading).relatedObject(forKey: "device")
                return [lampReadings, thermoReadings]
            }
        }
        expectEqual(loaded, [1, 0])
        let requestsBefore = readerStore.client.requestsSent
        try await onThread {
            try writer.performAndWait {
                try writer.existingObject(with: reading).setValue(.reference(thermo), forKey: "device")
                try writer.save()
            }
        }
        let moved = try await eventuallyAsync {
            reader.performAndWait {
                reader.registeredObject(for: lamp)?.value(forKey: "readings") == .references([])
                    && reader.registeredObject(for: thermo)?.value(forKey: "readings") == .references([reading])
                    && reader.registeredObject(for: reading)?.value(forKey: "device") == .reference(thermo)
            }
        }
        expectTrue(moved)
        expectEqual(readerStore.client.requestsSent, requestsBefore)
    }
}

extension ObjectContext {
    /// Inserts (does not save) a `Reading` of `device` with one byte `value`.
    func insertReading(_ value: UInt8, device: ManagedObject) -> ManagedObject {
        let reading = insert(entity: "Reading")
        reading["characteristic", as: String.self] = "2a19"
        reading["value", as: Data.self] = Data([value])
        reading["time", as: Date.self] = Date(timeIntervalSince1970: Double(value))
        reading.setValue(.reference(device.objectID), forKey: "device")
        return reading
    }
}
