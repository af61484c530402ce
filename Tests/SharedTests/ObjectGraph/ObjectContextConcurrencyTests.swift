import Dispatch
import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph

struct ObjectContextConcurrencyTests {
    @Test(arguments: StoreFactory.all)
    func manyContextsSaveConcurrentlyFromManyThreads(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let workers = 8
        let savesEach = 5
        let transactions = Collected<Int64>()
        let failures = Collected<String>()
        let store = fixture.store
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            let context = ObjectContext(store: store, name: "worker\(worker)")
            for save in 0..<savesEach {
                do {
                    try context.performAndWait {
                        for i in 0..<5 { context.makeDevice("w\(worker)-s\(save)-\(i)") }
                        try context.save()
                    }
                    transactions.append(store.lastTransaction)
                } catch {
                    failures.append("\(error)")
                }
            }
        }
        expectEmpty(failures.all)
        try expectEqual(fixture.store.all("Device").count, workers * savesEach * 5)
        expectEqual(fixture.store.lastTransaction, Int64(workers * savesEach))
        let check = fixture.makeContext("check")
        try check.performAndWait { () throws in
            try expectEqual(check.count(for: FetchRequest(entity: "Device")), workers * savesEach * 5)
        }
    }

    @Test(arguments: StoreFactory.all)
    func childrenSaveIntoOneParentFromManyThreads(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let ids = try fixture.seedDevices(4)
        let root = fixture.makeContext("root")
        let failures = Collected<String>()
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            let child = ObjectContext(parent: root, name: "child\(worker)")
            do {
                try child.performAndWait {
                    let device = child.object(with: ids[worker % ids.count])
                    child.makeReading(device: device, characteristic: "c\(worker)")
                    try child.save()
                }
            } catch {
                failures.append("\(error)")
            }
        }
        expectEmpty(failures.all)
        try root.performAndWait {
            expectEqual(root.insertedObjects.count, 8)
            try expectEqual(root.count(for: FetchRequest(entity: "Reading")), 8)
            try root.save()
        }
        try expectEqual(fixture.store.all("Reading").count, 8)
        for id in ids {
            try expectEqual(fixture.store.snapshot(id)?.values["readings"]?.referencedIDCount, 2)
        }
    }

    @Test(arguments: StoreFactory.all)
    func concurrentUpdatesOfOneObjectUnderErrorPolicyLoseNothingSilently(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let id = try fixture.seedDevices(1)[0]
        let store = fixture.store
        let committed = Collected<String>()
        let conflicts = Collected<String>()
        DispatchQueue.concurrentPerform(iterations: 6) { worker in
            let context = ObjectContext(store: store, name: "w\(worker)")
            context.performAndWait {
                context.object(with: id)["name", as: String.self] = "w\(worker)"
                do {
                    try context.save()
                    committed.append("w\(worker)")
                } catch StoreError.conflict {
                    conflicts.append("w\(worker)")
                } catch {
                    Issue.record("unexpected \(error)")
                }
            }
        }
        // Every save either committed (and bumped the version) or was told of a conflict.
        expectEqual(committed.all.count + conflicts.all.count, 6)
        let snapshot = try #require(try fixture.store.snapshot(id))
        expectEqual(snapshot.version, Int64(1 + committed.all.count))
        expectTrue(committed.all.contains(snapshot.values["name"].flatMap { String(propertyValue: $0) } ?? ""))
    }
}
