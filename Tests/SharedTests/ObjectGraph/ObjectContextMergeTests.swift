import Dispatch
import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph

struct ObjectContextMergeTests {
    /// A and B load the same device; A renames it and saves; B renames it and changes its
    /// address, then saves under `policy`.
    @Test(arguments: StoreFactory.all, MergePolicy.allCases)
    func eachMergePolicyResolvesAConflictBetweenTwoContexts(_ factory: StoreFactory, _ policy: MergePolicy) throws {
        let fixture = try ContextFixture(factory)
        let id = try fixture.seedDevices(1)[0]
        let a = fixture.makeContext("a")
        let b = fixture.makeContext("b")
        b.mergePolicy = policy
        let deviceB = b.performAndWait {
            let device = b.object(with: id)
            expectEqual(device.version, 1)
            return device
        }
        try a.performAndWait {
            a.object(with: id)["name", as: String.self] = "A"
            try a.save()
        }
        let error: StoreError? = b.performAndWait {
            deviceB["name", as: String.self] = "B"
            deviceB["address", as: String.self] = "B-addr"
            do {
                try b.save()
                return nil
            } catch {
                return error as? StoreError
            }
        }
        let stored = try #require(try fixture.store.snapshot(id))
        switch policy {
        case .error:
            guard case .conflict(let conflicts)? = error else {
                Issue.record("expected a conflict, got \(String(describing: error))")
                return
            }
            expectEqual(conflicts.count, 1)
            expectEqual(conflicts.first?.id, id)
            expectEqual(conflicts.first?.version, 1)
            expectEqual(conflicts.first?.currentVersion, 2)
            expectEqual(conflicts.first?.currentValues["name"], .string("A"))
            expectEqual(stored.values["name"], .string("A"))
            b.performAndWait {
                expectTrue(b.hasChanges)
                expectEqual(deviceB.string("name"), "B")
            }
        case .objectTrump, .overwrite:
            expectNil(error)
            expectEqual(stored.values["name"], .string("B"))
            expectEqual(stored.values["address"], .string("B-addr"))
            b.performAndWait {
                expectFalse(b.hasChanges)
                expectEqual(deviceB.version, 3)
                expectEqual(deviceB.string("name"), "B")
            }
        case .storeTrump:
            expectNil(error)
            expectEqual(stored.values["name"], .string("A"))
            expectEqual(stored.values["address"], .string("B-addr"))
            b.performAndWait {
                expectEqual(deviceB.string("name"), "A")
                expectEqual(deviceB.string("address"), "B-addr")
                expectEqual(deviceB.version, 3)
            }
        case .rollback:
            expectNil(error)
            expectEqual(stored.values["name"], .string("A"))
            expectEqual(stored.values["address"], .string("AA:d0"))
            expectEqual(stored.version, 2)
            b.performAndWait {
                expectFalse(b.hasChanges)
                expectEqual(deviceB.string("name"), "A")
                expectEqual(deviceB.version, 2)
            }
        }
    }

    @Test(arguments: StoreFactory.all)
    func didSavePublishesEveryCommittedChangeSet(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let context = fixture.makeContext("publisher")
        let received = Collected<ChangeSet>()
        let disposable = context.didSave.startWithValues { received.append($0) }
        let (deviceID, txn) = try context.performAndWait {
            let device = context.makeDevice("one")
            try context.save()
            device["name", as: String.self] = "two"
            try context.save()
            return (device.objectID, fixture.store.lastTransaction)
        }
        expectEqual(received.all.count, 2)
        expectEqual(received.all.first?.inserted.map(\.id), [deviceID])
        expectEqual(received.all.first?.author, "publisher")
        expectEqual(received.all.last?.updated.map(\.snapshot.id), [deviceID])
        expectEqual(received.all.last?.updated.first?.changedKeys, ["name"])
        expectEqual(received.all.last?.txn, txn)
        disposable.dispose()
        try context.performAndWait {
            context.object(with: deviceID)["name", as: String.self] = "three"
            try context.save()
        }
        expectEqual(received.all.count, 2)
    }

    @Test(arguments: StoreFactory.all)
    func childSavePublishesAChangeSetWithTemporaryIDs(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let root = fixture.makeContext("root")
        let child = ObjectContext(parent: root, name: "child")
        let received = Collected<ChangeSet>()
        let disposable = child.didSave.startWithValues { received.append($0) }
        defer { disposable.dispose() }
        let id = try child.performAndWait {
            let device = child.makeDevice("kid")
            try child.save()
            return device.objectID
        }
        expectEqual(received.all.count, 1)
        expectEqual(received.all.first?.txn, 0)
        expectEqual(received.all.first?.inserted.map(\.id), [id])
        expectTrue(id.isTemporary)
    }

    @Test(arguments: StoreFactory.all)
    func mergeUpdatesRegisteredObjectsAndKeepsUnsavedChangesOnTop(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let ids = try fixture.seedDevices(2)
        let writer = fixture.makeContext("writer")
        let reader = fixture.makeContext("reader")
        let (device, gone) = reader.performAndWait {
            let device = reader.object(with: ids[0])
            device["name", as: String.self] = "mine"
            let gone = reader.object(with: ids[1])
            _ = gone.string("name")
            return (device, gone)
        }
        let received = Collected<ChangeSet>()
        let disposable = writer.didSave.startWithValues { received.append($0) }
        defer { disposable.dispose() }
        try writer.performAndWait {
            let device = writer.object(with: ids[0])
            device["name", as: String.self] = "theirs"
            device["address", as: String.self] = "new-addr"
            writer.delete(writer.object(with: ids[1]))
            try writer.save()
        }
        let changes = try #require(received.all.first)
        try reader.performAndWait {
            reader.merge(changes)
            expectEqual(device.string("address"), "new-addr")
            expectEqual(device.string("name"), "mine")
            expectEqual(device.version, 2)
            expectTrue(gone.isDeleted)
            expectNil(reader.registeredObject(for: ids[1]))
            try reader.save()  // no conflict: the merge moved the version on
            expectEqual(device.version, 3)
        }
        try expectEqual(fixture.store.snapshot(ids[0])?.values["name"], .string("mine"))
    }

    @Test(arguments: StoreFactory.all)
    func automaticallyMergesChangesUpdatesAnotherContextsRegisteredObjects(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let id = try fixture.seedDevices(1)[0]
        let follower = fixture.makeContext("follower")
        follower.automaticallyMergesChanges = true
        let device = follower.performAndWait {
            let device = follower.object(with: id)
            _ = device.string("name")
            return device
        }
        let merged = waitForMerge(into: follower, from: fixture.store)
        let writer = fixture.makeContext("writer")
        try writer.performAndWait {
            writer.object(with: id)["name", as: String.self] = "pushed"
            try writer.save()
        }
        expectEqual(merged.semaphore.wait(timeout: .now() + patience), .success)
        merged.observation.cancel()
        follower.performAndWait {
            expectEqual(device.string("name"), "pushed")
            expectEqual(device.version, 2)
            expectFalse(device.hasChanges)
        }
    }

    @Test(arguments: StoreFactory.all)
    func siblingSavesAndParentSavesMergeIntoAChildThatMergesAutomatically(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let id = try fixture.seedDevices(1)[0]
        let root = fixture.makeContext("root")
        let main = ObjectContext(parent: root, name: "main")
        let worker = ObjectContext(parent: root, name: "worker")
        main.automaticallyMergesChanges = true
        let device = main.performAndWait {
            let device = main.object(with: id)
            _ = device.string("name")
            return device
        }
        let newID = try worker.performAndWait {
            worker.object(with: id)["name", as: String.self] = "from worker"
            let fresh = worker.makeDevice("fresh")
            try worker.save()
            return fresh.objectID
        }
        drain(main)
        let fresh = try main.performAndWait {
            expectEqual(device.string("name"), "from worker")
            let fresh = try main.existingObject(with: newID)
            expectEqual(fresh.string("name"), "fresh")
            return fresh
        }
        try root.performAndWait { try root.save() }
        drain(main)
        main.performAndWait {
            expectEqual(device.version, 2)
            expectFalse(fresh.objectID.isTemporary)
            expectEqual(fresh.version, 1)
            expectTrue(main.object(with: fresh.objectID) === fresh)
        }
    }

    @Test(arguments: StoreFactory.all)
    func storeChangesReachChildrenThroughAnAutomaticallyMergingRoot(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let id = try fixture.seedDevices(1)[0]
        let root = fixture.makeContext("root")
        root.automaticallyMergesChanges = true
        let main = ObjectContext(parent: root, name: "main")
        main.automaticallyMergesChanges = true
        let device = main.performAndWait {
            let device = main.object(with: id)
            _ = device.string("name")
            return device
        }
        let merged = waitForMerge(into: root, from: fixture.store)
        let other = fixture.makeContext("other process")
        try other.performAndWait {
            other.object(with: id)["name", as: String.self] = "elsewhere"
            try other.save()
        }
        expectEqual(merged.semaphore.wait(timeout: .now() + patience), .success)
        merged.observation.cancel()
        drain(main)
        main.performAndWait { expectEqual(device.string("name"), "elsewhere") }
    }

    /// Signals once `context` has handled the next change set `store` commits: the context's
    /// own store observer was registered first, so its merge block is queued before ours.
    private func waitForMerge(
        into context: ObjectContext, from store: any PersistentStore
    ) -> (semaphore: DispatchSemaphore, observation: StoreObservation) {
        let done = DispatchSemaphore(value: 0)
        let observation = store.observeChanges { _ in context.perform { done.signal() } }
        return (done, observation)
    }
}
