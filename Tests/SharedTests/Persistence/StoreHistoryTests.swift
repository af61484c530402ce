import Dispatch
import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSupport

/// History, replay, retention and change observation, against every store.
struct StoreHistoryTests {
    private func makeSomeHistory(_ store: any PersistentStore) throws -> [ChangeSet] {
        var changes: [ChangeSet] = []
        let device = tmp("Device", "d")
        var result = try store.commit(
            SaveRequest(
                inserts: [
                    .init(id: device, values: ["address": .string("AA"), "lastSeen": .date(Date())]),
                    .init(
                        id: tmp("Reading", "r"),
                        values: [
                            "characteristic": .string("2a19"), "value": .binary(Data([7, 8])),
                            "time": .date(Date(timeIntervalSince1970: 12.5)), "device": .reference(device),
                        ]),
                ], author: "alice"))
        changes.append(result.changes!)
        let deviceID = result.ids[device]!
        result = try store.commit(
            SaveRequest(updates: [.init(id: deviceID, version: 1, values: ["name": .string("thermo")])]))
        changes.append(result.changes!)
        result = try store.commit(SaveRequest(deletes: [.init(id: deviceID, version: 2)], author: "bob"))
        changes.append(result.changes!)
        return changes
    }

    @Test(arguments: StoreFactory.all)
    func historyReturnsTheExactCommittedChangeSets(factory: StoreFactory) throws {
        let store = try factory.make(Model.deviceReadings)
        let committed = try makeSomeHistory(store)
        try expectEqual(store.history(since: 0, limit: 100), committed)
        try expectEqual(store.history(since: 1, limit: 1), [committed[1]])
        expectTrue(try store.history(since: 3, limit: 100).isEmpty)
        expectEqual(committed.map(\.txn), [1, 2, 3])
        expectTrue(committed[0].author == "alice" && committed[2].author == "bob")
    }

    @Test(arguments: StoreFactory.all)
    func replayingTheHistoryRebuildsTheCommittedObjects(factory: StoreFactory) throws {
        let store = try factory.make(Model.deviceReadings)
        _ = try makeSomeHistory(store)
        try store.insert("Device", ["address": .string("BB")])
        var replayed: [ObjectID: ObjectSnapshot] = [:]
        for change in try store.history(since: 0, limit: 100) {
            for snapshot in change.inserted { replayed[snapshot.id] = snapshot }
            for update in change.updated { replayed[update.snapshot.id] = update.snapshot }
            for snapshot in change.deleted { replayed[snapshot.id] = nil }
        }
        expectEqual(replayed, (try store.everything()))
        expectEqual(replayed.count, 1)  // the cascade took the reading with the device
    }

    @Test(arguments: StoreFactory.all)
    func historyOlderThanTheRetentionIsUnavailable(factory: StoreFactory) throws {
        let store = try factory.make(Model.deviceReadings)  // retention 50 in tests
        for i in 0..<120 { try store.insert("Device", ["address": .string("\(i)")]) }
        let error = storeError { _ = try store.history(since: 0, limit: 10) }
        guard case .historyUnavailable(let since, let oldest)? = error else {
            throw error ?? StoreError.unavailable("")
        }
        expectTrue(since == 0 && oldest > 1)
        let recent = try store.history(since: 100, limit: 100)
        expectEqual(recent.map(\.txn), Array(101...120))
    }

    @Test(arguments: StoreFactory.all)
    func observersSeeEveryCommitInTxnOrder(factory: StoreFactory) throws {
        let store = try factory.make(Model.deviceReadings)
        let seen = Locked<[Int64]>([])
        let done = DispatchSemaphore(value: 0)
        let observation = store.observeChanges { change in
            let count = seen.withLock {
                $0.append(change.txn)
                return $0.count
            }
            if count == 20 { done.signal() }
        }
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for i in 0..<5 { _ = try? store.insert("Device", ["address": .string("\(worker)-\(i)")]) }
        }
        expectEqual(done.wait(timeout: .now() + patience), .success)
        expectEqual(seen.withLock { $0 }, Array(1...20))
        observation.cancel()
    }
}
