import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSupport
@testable import ContextBusTransport
@testable import ContextBusWire

/// Several clients saving at once against the real `storesvc` process.
struct StoreServiceConcurrencyTests {
    static let counterModel =
        #"{"entities":[{"name":"Counter","attributes":[{"name":"value","type":"int","default":0}]}]}"#

    private func startWithCounterModel() throws -> StoreServiceProcess {
        let directory = try makeTemporaryDirectory()
        let modelURL = directory.appendingPathComponent("model.json")
        try Self.counterModel.write(to: modelURL, atomically: true, encoding: .utf8)
        return try StoreServiceProcess(directory: directory, arguments: ["--model", modelURL.path])
    }

    @Test func concurrentIncrementsFromSeveralConnectionsLoseNoUpdate() async throws {
        let service = try startWithCounterModel()
        defer { service.destroy() }
        let setup = try await service.client("setup")
        let created = try await setup.call(
            StoreSave.self, SaveRequest(inserts: [.init(entity: "Counter", ref: "c", values: [:])]))
        let counter = try #require(created.id(ref: "c"))
        let clients = 6
        let incrementsEach = 15
        let txnsPerClient = try await withThrowingTaskGroup(of: [Int64].self) { group in
            for i in 0..<clients {
                group.addTask {
                    let client = try await service.client("writer\(i)")
                    defer { client.close() }
                    var txns: [Int64] = []
                    while txns.count < incrementsEach {
                        let current = try await client.call(StoreGet.self, GetParams(ids: [counter])).objects[0]
                        let value = current.values["value"]?.intValue ?? 0
                        do {
                            let saved = try await client.call(
                                StoreSave.self,
                                SaveRequest(updates: [
                                    .init(id: counter, version: current.version, values: ["value": .int(value + 1)])
                                ]))
                            txns.append(saved.txn)
                        } catch let error as RPCError where error.code == .conflict {
                            continue  // someone else incremented first: read again
                        }
                    }
                    return txns
                }
            }
            var all: [[Int64]] = []
            for try await txns in group { all.append(txns) }
            return all
        }
        let final = try await setup.call(StoreGet.self, GetParams(ids: [counter])).objects[0]
        expectEqual(final.values["value"], .int(Int64(clients * incrementsEach)))
        expectEqual(final.version, Int64(clients * incrementsEach + 1))
        for txns in txnsPerClient { expectTrue(txns == txns.sorted() && Set(txns).count == txns.count) }
        let everyTxn = txnsPerClient.flatMap { $0 }
        expectEqual(Set(everyTxn).count, everyTxn.count, "two saves were given the same txn")
        setup.close()
    }

    @Test func pipelinedSavesOfOneConnectionAreAppliedInArrivalOrder() throws {
        let service = try startWithCounterModel()
        defer { service.destroy() }
        let connection = try RawBusConnection(path: service.socketPath)
        try connection.hello()
        _ = try connection.call(1, "store.save", #"{"insert":[{"entity":"Counter","ref":"c"}]}"#)
        var frames: [UInt8] = []
        for i in 1...200 {
            frames += Frame.encode(
                payload: Array(
                    #"{"jsonrpc":"2.0","id":\#(i + 1),"method":"store.save","params":{"update":[{"id":"Counter/1","values":{"value":\#(i)}}]}}"#
                        .utf8))
        }
        try connection.write(frames)
        var txns: [Int64: Int64] = [:]
        while txns.count < 200, let message = try connection.readMessage() {
            if let id = message["id"]?.intValue, let txn = message["result"]?["txn"]?.intValue { txns[id] = txn }
        }
        expectEqual((2...201).map { txns[Int64($0)] ?? -1 }, Array(2...201))
        let final = try connection.call(300, "store.get", #"{"ids":["Counter/1"]}"#)
        expectEqual(final["result"]?["objects"]?[0]?["values"]?["value"], .int(200))
    }

    @Test func conflictsAreResolvedPerMergePolicy() async throws {
        let service = try StoreServiceProcess.start()
        defer { service.destroy() }
        let client = try await service.client()
        defer { client.close() }
        let created = try await client.call(
            StoreSave.self,
            SaveRequest(inserts: [
                .init(entity: "Device", ref: "d", values: ["address": .string("A"), "name": .string("one")])
            ]))
        let device = try #require(created.id(ref: "d"))
        // Someone else changes it: version 2, name "two".
        _ = try await client.call(
            StoreSave.self, SaveRequest(updates: [.init(id: device, version: 1, values: ["name": .string("two")])]))
        func stale(
            _ policy: MergePolicy, values: [String: PropertyValue], original: [String: PropertyValue] = [:]
        )
            async throws -> SaveResult
        {
            try await client.call(
                StoreSave.self,
                SaveRequest(
                    updates: [.init(id: device, version: 1, values: values, original: original)], mergePolicy: policy))
        }
        do {
            _ = try await stale(.error, values: ["name": .string("mine")])
            Issue.record("a stale update under 'error' was accepted")
        } catch let error as RPCError {
            expectEqual(error.code, .conflict)
            let conflict = try SaveConflict(json: try #require(error.data?["conflicts"]?[0]))
            expectEqual(
                conflict,
                SaveConflict(
                    id: device, version: 1, currentVersion: 2,
                    currentValues: [
                        "address": .string("A"), "name": .string("two"), "connected": .bool(false),
                        "lastSeen": .null,
                        "readings": .array([]),
                    ]))
        }
        let rolledBack = try await stale(.rollback, values: ["name": .string("mine")])
        expectNil(rolledBack.versions[device])
        let kept = try await stale(.storeTrump, values: ["name": .string("mine")], original: ["name": .string("one")])
        expectNil(kept.versions[device], "storeTrump keeps the store's changed value")
        let trumped = try await stale(.objectTrump, values: ["name": .string("mine")])
        expectEqual(trumped.versions[device], 3)
        let current = try await client.call(StoreGet.self, GetParams(ids: [device])).objects[0]
        expectEqual(current.values["name"], .string("mine"))
        do {
            _ = try await client.call(
                StoreSave.self, SaveRequest(deletes: [.init(id: ObjectID(entity: "Device", number: 99), version: 1)]))
            Issue.record("a delete of a missing object under 'error' was accepted")
        } catch let error as RPCError {
            expectEqual(error.code, .conflict)
            expectEqual(error.data?["conflicts"]?[0]?["currentVersion"], .null)
        }
    }
}

extension JSONValue {
    fileprivate subscript(index: Int) -> JSONValue? {
        guard case .array(let items) = self, items.indices.contains(index) else { return nil }
        return items[index]
    }
}
