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

    /// PROTOCOL.md: an update that would give two live objects the same key fails with `409` under every policy,
    /// `data.conflicts` `{"id","key","conflictsWith"}`.
    @Test(arguments: ["error", "objectTrump", "rollback"])
    func anUpdateToAnAddressAnotherDeviceHasIsA409NamingBoth(policy: String) throws {
        let service = try StoreServiceProcess.start()
        defer { service.destroy() }
        let connection = try RawBusConnection(path: service.socketPath)
        try connection.hello()
        _ = try connection.call(
            1, "store.save",
            #"{"insert":[{"entity":"Device","values":{"address":"AA:01"}},{"entity":"Device","values":{"address":"AA:02"}}]}"#
        )
        let refused = try connection.call(
            2, "store.save",
            #"{"update":[{"id":"Device/2","values":{"address":"AA:01"}}],"mergePolicy":"\#(policy)"}"#)
        expectEqual(refused["error"]?["code"], .int(409))
        expectEqual(
            refused["error"]?["data"]?["conflicts"],
            .array([
                .object([
                    "id": .string("Device/2"), "key": .object(["address": .string("AA:01")]),
                    "conflictsWith": .string("Device/1"),
                ])
            ]))
        let devices = try connection.call(3, "store.fetch", #"{"entity":"Device","sort":[{"key":"address"}]}"#)
        expectEqual(
            devices["result"]?["objects"]?.arrayValue?.map { $0["values"]?["address"] },
            [.string("AA:01"), .string("AA:02")])
    }

    /// A batch `set` that would give two devices one address: `409`, nothing written.
    @Test func aBatchSetThatGivesTwoDevicesOneAddressIsA409() throws {
        let service = try StoreServiceProcess.start()
        defer { service.destroy() }
        let connection = try RawBusConnection(path: service.socketPath)
        try connection.hello()
        _ = try connection.call(
            1, "store.save",
            #"{"insert":[{"entity":"Device","values":{"address":"AA:01"}},{"entity":"Device","values":{"address":"AA:02"}}]}"#
        )
        let refused = try connection.call(2, "store.batch", #"{"entity":"Device","set":{"address":"AA:09"}}"#)
        expectEqual(refused["error"]?["code"], .int(409))
        let conflict = try #require(refused["error"]?["data"]?["conflicts"]?.arrayValue?.first)
        expectEqual(conflict["key"], .object(["address": .string("AA:09")]))
        expectEqual(conflict["conflictsWith"], .string("Device/1"))
        expectEqual(conflict["id"], .string("Device/2"))
        let stats = try connection.call(3, "store.stats")
        expectEqual(stats["result"]?["lastTxn"], .int(1))
        // One device may take the address.
        let one = try connection.call(
            4, "store.batch", #"{"entity":"Device","where":"address == 'AA:02'","set":{"address":"AA:09"}}"#)
        expectEqual(one["result"]?["count"], .int(1))
    }

    /// A `--model` file's `uniqueBy` is read, reported by `store.model` and enforced.
    @Test func aModelFilesUniqueByIsReportedByStoreModelAndEnforced() throws {
        let directory = try makeTemporaryDirectory()
        let modelURL = directory.appendingPathComponent("model.json")
        try #"""
        {"entities":[{"name":"Gadget","attributes":[{"name":"serial","type":"string"},{"name":"maker","type":"string"}],
          "uniqueBy":[["serial","maker"]]}]}
        """#.write(to: modelURL, atomically: true, encoding: .utf8)
        let service = try StoreServiceProcess(directory: directory, arguments: ["--model", modelURL.path])
        defer { service.destroy() }
        let connection = try RawBusConnection(path: service.socketPath)
        try connection.hello()
        let model = try connection.call(1, "store.model")
        let gadget = try #require(model["result"]?["entities"]?.arrayValue?.first)
        expectEqual(gadget["uniqueBy"], .array([.array([.string("serial"), .string("maker")])]))
        let insert = #"{"insert":[{"entity":"Gadget","ref":"g","values":{"serial":"S1","maker":"acme"}}]}"#
        expectEqual(try connection.call(2, "store.save", insert)["result"]?["ids"]?["g"], .string("Gadget/1"))
        let refused = try connection.call(3, "store.save", insert)
        expectEqual(refused["error"]?["code"], .int(409))
        expectEqual(
            refused["error"]?["data"]?["conflicts"]?.arrayValue?.first?["key"],
            .object(["serial": .string("S1"), "maker": .string("acme")]))
        // Another maker is another key.
        let other = try connection.call(
            4, "store.save", #"{"insert":[{"entity":"Gadget","values":{"serial":"S1","maker":"other"}}]}"#)
        expectNotNil(other["result"]?["txn"])
    }

    /// A `--model` file whose `uniqueBy` does not fit stops the service at start (exit 78, an invalid model file) with
    /// the reason.
    @Test(arguments: [
        (#"[["colour"]]"#, "Gadget.uniqueBy names 'colour'"),
        (#"[[]]"#, "Gadget.uniqueBy has an empty set of keys"),
        (#"[["serial","serial"]]"#, "Gadget.uniqueBy names 'serial'"),
        (#"[["parts"]]"#, "Gadget.uniqueBy names 'parts'"),
        (#"[[1]]"#, "Gadget.uniqueBy: expected an array of arrays of keys"),
    ])
    func aModelFileWithABadUniqueByStopsTheServiceWithTheReason(uniqueBy: String, reason: String) throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let modelURL = directory.appendingPathComponent("model.json")
        try #"""
        {"entities":[{"name":"Gadget","attributes":[{"name":"serial","type":"string"}],
          "relationships":[{"name":"parts","destination":"Part","toMany":true,"inverse":"gadget"}],
          "uniqueBy":\#(uniqueBy)},
         {"name":"Part","relationships":[{"name":"gadget","destination":"Gadget","inverse":"parts"}]}]}
        """#.write(to: modelURL, atomically: true, encoding: .utf8)
        let output = try runProduct(
            "storesvc",
            arguments: [
                "--model", modelURL.path, "--socket", directory.appendingPathComponent("s.sock").path, "--database",
                directory.appendingPathComponent("store.sqlite").path,
            ])
        expectEqual(output.status, 78)
        expectTrue(output.standardError.contains(reason), "\(output.standardError)")
        expectFalse(FileManager.default.fileExists(atPath: directory.appendingPathComponent("s.sock").path))
    }
}
