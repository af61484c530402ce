import Foundation
import TestSupport
import Testing

@testable import ContextBusClient

/// Unique keys on the wire (docs/protocol.md, "Unique constraints and upsert"), against the real storesvc and its
/// default model, whose `Device` is unique by `address`.
struct StoreServiceUniqueKeyTests {
    @Test func aSecondInsertOfAnAddressIsA409NamingTheRefTheObjectAndTheKey() throws {
        let service = try StoreServiceProcess.start()
        defer { service.destroy() }
        let connection = try RawBusConnection(path: service.socketPath)
        try connection.hello()
        let insert = #"{"insert":[{"entity":"Device","ref":"d","values":{"address":"AA:01","name":"first"}}]}"#
        _ = try connection.call(1, "store.save", insert)
        let refused = try connection.call(2, "store.save", insert)
        expectEqual(refused["error"]?["code"], .int(409))
        let conflict = try #require(refused["error"]?["data"]?["conflicts"]?.arrayValue?.first)
        expectEqual(conflict["ref"], .string("d"))
        expectEqual(conflict["id"], .string("Device/1"))
        expectEqual(conflict["key"], .object(["address": .string("AA:01")]))
        expectEqual(conflict["currentVersion"], .int(1))
        expectEqual(conflict["currentValues"]?["name"], .string("first"))
        // The service stays up with its data intact: one device.
        let count = try connection.call(3, "store.fetch", #"{"entity":"Device","result":"count"}"#)
        expectEqual(count["result"]?["count"], .int(1))
    }

    @Test func anUpsertAnswersTheExistingIDAndSubscribersSeeAnUpdate() throws {
        let service = try StoreServiceProcess.start()
        defer { service.destroy() }
        let connection = try RawBusConnection(path: service.socketPath)
        try connection.hello()
        _ = try connection.call(
            1, "store.save", #"{"insert":[{"entity":"Device","ref":"d","values":{"address":"AA:02","name":"old"}}]}"#)
        let watcher = try RawBusConnection(path: service.socketPath)
        try watcher.hello()
        _ = try watcher.call(1, "store.subscribe", #"{"entity":"Device"}"#)
        let saved = try connection.call(
            2, "store.save",
            #"{"insert":[{"entity":"Device","ref":"again","values":{"address":"AA:02","name":"new"}}],"mergePolicy":"objectTrump","changes":true}"#
        )
        expectEqual(saved["result"]?["ids"]?["again"], .string("Device/1"))
        expectEqual(saved["result"]?["versions"]?["Device/1"], .int(2))
        expectEqual(saved["result"]?["changes"]?["updated"]?.arrayValue?.first?["changed"], .array([.string("name")]))
        let event = try #require(try watcher.readMessage())
        expectEqual(event["method"], .string("store.changed"))
        expectEqual(event["params"]?["inserted"], .array([]))
        expectEqual(event["params"]?["updated"]?.arrayValue?.first?["id"], .string("Device/1"))
        expectEqual(event["params"]?["updated"]?.arrayValue?.first?["values"], .object(["name": .string("new")]))
    }

    @Test func aRemoteContextsUpsertBecomesTheExistingDevice() async throws {
        let service = try await onThread { try StoreServiceProcess.start() }
        defer { service.destroy() }
        let store = try await service.remoteStore()
        defer { store.close() }
        let first = try await onThread {
            try #require(
                try store.save(
                    SaveRequest(inserts: [.init(entity: "Device", ref: "d", values: ["address": .string("AA:03")])])
                )
                .id(ref: "d"))
        }
        let context = ObjectContext(store: store, name: "importer")
        context.mergePolicy = .objectTrump
        let id = try await onThread {
            try context.performAndWait { () throws -> ObjectID in
                let device = context.insert(entity: "Device")
                device["address", as: String.self] = "AA:03"
                device["name", as: String.self] = "imported"
                let reading = context.insert(entity: "Reading")
                reading["characteristic", as: String.self] = "2a19"
                reading["value", as: Data.self] = Data([1])
                reading["time", as: Date.self] = Date(timeIntervalSince1970: 1)
                reading.setRelatedObject(device, forKey: "device")
                try context.save()
                expectEqual(device.string("name"), "imported")
                return device.objectID
            }
        }
        expectEqual(id, first)
        let snapshot = try await onThread { try store.objects(with: [first]).objects.first }
        expectEqual(snapshot?.values["name"], .string("imported"))
        expectEqual(snapshot?.values["readings"]?.referencesValue?.count, 1)
    }
}
