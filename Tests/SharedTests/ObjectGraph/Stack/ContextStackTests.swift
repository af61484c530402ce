import Dispatch
import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph

struct ContextStackTests {
    @Test func theStackIsARootWithAMainChildOnTheMainQueue() throws {
        let fixture = try StackFixture()
        let stack = fixture.stack
        expectNil(stack.root.parent)
        expectEqual(stack.root.concurrencyType, .privateQueue)
        expectTrue(stack.main.parent === stack.root)
        expectEqual(stack.main.concurrencyType, .mainQueue)
        expectTrue(stack.main.queue === testMainQueue)
        expectTrue(stack.main.automaticallyMergesChanges)
        let worker = stack.newWorker()
        expectTrue(worker.parent === stack.root)
        expectEqual(worker.concurrencyType, .privateQueue)
    }

    @Test func aWorkersSaveIsMergedIntoMainAtOnceAndReachesTheStoreOnlyLater() throws {
        let fixture = try StackFixture()
        let stack = fixture.stack
        let id = try fixture.seedDevice("before")
        let onMain = stack.main.performAndWait { try? stack.main.existingObject(with: id) }
        expectNotNil(onMain)

        let worker = stack.newWorker()
        try worker.performAndWait {
            try worker.existingObject(with: id)["name", as: String.self] = "after"
            try worker.save()
        }
        drain(stack.main)
        expectEqual(stack.main.performAndWait { stack.main.registeredObject(for: id)?.string("name") }, "after")
        // Not written yet: the background save waits for the timer.
        try expectEqual(fixture.storedName(of: id), "before")
        fixture.fireBackgroundSave()
        try expectEqual(fixture.storedName(of: id), "after")
    }

    @Test func aWorkersSaveIsMergedIntoOtherLiveWorkers() throws {
        let fixture = try StackFixture()
        let id = try fixture.seedDevice("before")
        let reader = fixture.stack.newWorker(name: "reader")
        _ = try reader.performAndWait { try reader.existingObject(with: id) }
        let writer = fixture.stack.newWorker(name: "writer")
        try writer.performAndWait {
            try writer.existingObject(with: id)["name", as: String.self] = "after"
            try writer.save()
        }
        drain(reader)
        expectEqual(reader.performAndWait { reader.registeredObject(for: id)?.string("name") }, "after")
    }

    @Test func workersCanBeLeftOutOfMerging() throws {
        let fixture = try StackFixture(workersMergeChanges: false)
        let id = try fixture.seedDevice("before")
        let reader = fixture.stack.newWorker(name: "reader")
        _ = try reader.performAndWait { try reader.existingObject(with: id) }
        let writer = fixture.stack.newWorker(name: "writer")
        try writer.performAndWait {
            try writer.existingObject(with: id)["name", as: String.self] = "after"
            try writer.save()
        }
        drain(reader)
        drain(fixture.stack.main)
        expectEqual(reader.performAndWait { reader.registeredObject(for: id)?.string("name") }, "before")
        expectFalse(reader.automaticallyMergesChanges)
    }

    @Test func aReleasedWorkerDisappearsFromTheDirectory() throws {
        let fixture = try StackFixture()
        let kept = fixture.stack.newWorker(name: "kept")
        weak var released: ObjectContext?
        do {
            let temporary = fixture.stack.newWorker(name: "temporary")
            try temporary.performAndWait {
                temporary.makeDevice("x")
                try temporary.save()
            }
            released = temporary
            expectEqual(fixture.stack.liveWorkers.count, 2)
        }
        drain(fixture.stack.root)
        expectNil(released)
        expectEqual(fixture.stack.liveWorkers.map(\.name), ["kept"])
        expectTrue(fixture.stack.liveWorkers.first === kept)
    }

    @Test func theRootWritesOnceForSavesThatArriveWithinTheDelay() throws {
        let fixture = try StackFixture()
        let before = fixture.store.lastTransaction
        for i in 0..<3 {
            let worker = fixture.stack.newWorker()
            try worker.performAndWait {
                worker.makeDevice("d\(i)")
                try worker.save()
            }
        }
        fixture.timer.advance(by: StackFixture.delay - .milliseconds(1))
        drain(fixture.stack.root)
        try expectEqual(fixture.storedDeviceCount(), 0)
        fixture.timer.advance(by: .milliseconds(1))
        drain(fixture.stack.root)
        try expectEqual(fixture.storedDeviceCount(), 3)
        expectEqual(fixture.store.lastTransaction, before + 1)
        expectEqual(fixture.timer.pendingCount, 0)
    }

    @Test func aSteadyStreamOfSavesIsStillWrittenEveryDelay() throws {
        let fixture = try StackFixture()
        let worker = fixture.stack.newWorker()
        for i in 0..<4 {
            try worker.performAndWait {
                worker.makeDevice("d\(i)")
                try worker.save()
            }
            fixture.timer.advance(by: StackFixture.delay / 2)
            drain(fixture.stack.root)
        }
        // Saves every half delay: the first write came one delay after the first save.
        expectGreaterThanOrEqual(try fixture.storedDeviceCount(), 2)
        fixture.fireBackgroundSave()
        try expectEqual(fixture.storedDeviceCount(), 4)
    }

    @Test func saveRootWritesAtOnce() throws {
        let fixture = try StackFixture()
        let worker = fixture.stack.newWorker()
        try worker.performAndWait {
            worker.makeDevice("sync")
            try worker.save()
        }
        try fixture.stack.saveRoot()
        try expectEqual(fixture.storedDeviceCount(), 1)
        expectEqual(fixture.timer.pendingCount, 0)
    }

    @Test func asyncSaveRootWritesAtOnce() async throws {
        let fixture = try StackFixture()
        let worker = fixture.stack.newWorker()
        try await worker.perform {
            worker.makeDevice("async")
            try worker.save()
        }
        try await fixture.stack.saveRoot()
        try expectEqual(fixture.storedDeviceCount(), 1)
        expectEqual(fixture.timer.pendingCount, 0)
    }

    @Test func aFailedBackgroundSaveIsSentOnSaveErrorsAndTheRootKeepsItsChanges() throws {
        let fixture = try StackFixture()
        let failures = Collected<String>()
        let observation = fixture.stack.saveErrors.startWithValues { failures.append($0.description) }
        defer { observation.dispose() }
        fixture.failingStore.failing = true
        let worker = fixture.stack.newWorker()
        try worker.performAndWait {
            worker.makeDevice("kept")
            try worker.save()
        }
        fixture.fireBackgroundSave()
        expectEqual(failures.all.count, 1)
        expectEqual(failures.all.first?.contains("injected save failure"), true)
        expectTrue(fixture.stack.root.performAndWait { fixture.stack.root.hasChanges })
        try expectEqual(fixture.storedDeviceCount(), 0)

        fixture.failingStore.failing = false
        try fixture.stack.saveRoot()
        try expectEqual(fixture.storedDeviceCount(), 1)
        expectEqual(failures.all.count, 1)
    }

    @Test func saveRootThrowsWhatTheStoreThrows() throws {
        let fixture = try StackFixture()
        fixture.failingStore.failing = true
        let worker = fixture.stack.newWorker()
        try worker.performAndWait {
            worker.makeDevice("x")
            try worker.save()
        }
        #expect(throws: FailingStore.InjectedFailure.self) { try fixture.stack.saveRoot() }
    }

    @Test func shutdownWritesWhatIsLeftAndStopsBackgroundSaving() throws {
        let fixture = try StackFixture()
        let worker = fixture.stack.newWorker()
        try worker.performAndWait {
            worker.makeDevice("last")
            try worker.save()
        }
        try fixture.stack.shutdown()
        try expectEqual(fixture.storedDeviceCount(), 1)
        try worker.performAndWait {
            worker.makeDevice("after shutdown")
            try worker.save()
        }
        expectEqual(fixture.timer.pendingCount, 0)
        fixture.fireBackgroundSave()
        try expectEqual(fixture.storedDeviceCount(), 1)
    }

    @Test func mainLearnsPermanentIDsWhenTheRootSaves() throws {
        let fixture = try StackFixture()
        let stack = fixture.stack
        let worker = stack.newWorker()
        let temporary = try worker.performAndWait {
            let device = worker.makeDevice("new")
            try worker.save()
            return device.objectID
        }
        expectTrue(temporary.isTemporary)
        let name = stack.main.performAndWait { stack.main.object(with: temporary).string("name") }
        expectEqual(name, "new")
        fixture.fireBackgroundSave()
        drain(stack.main)
        let id = stack.main.performAndWait { stack.main.object(with: temporary).objectID }
        expectFalse(id.isTemporary)
        try expectEqual(fixture.storedName(of: id), "new")
    }
}

extension ContextStackTests {
    @Test func mainResolvesATemporaryIDItNeverSawAfterTheRootSaved() throws {
        let fixture = try StackFixture()
        let stack = fixture.stack
        // Main shows a device; a worker adds a reading to it, unseen by main.
        let deviceID = try fixture.seedDevice("shown")
        _ = try stack.main.performAndWait { try stack.main.existingObject(with: deviceID) }
        let worker = stack.newWorker()
        let readingID = try worker.performAndWait {
            let reading = worker.makeReading(device: try worker.existingObject(with: deviceID))
            try worker.save()
            return reading.objectID
        }
        expectTrue(readingID.isTemporary)
        fixture.fireBackgroundSave()
        drain(stack.main)
        let (resolved, characteristic, related) = stack.main.performAndWait {
            let reading = stack.main.object(with: readingID)
            let device = stack.main.registeredObject(for: deviceID)
            return (
                reading.objectID, reading.string("characteristic"),
                device?.relatedObjects(forKey: "readings").map(\.objectID)
            )
        }
        expectFalse(resolved.isTemporary)
        expectEqual(characteristic, "2a19")
        expectEqual(related, [resolved])
    }
}

extension StackFixture {
    /// Saves one device through a worker and the root into the store; returns its ID.
    ///
    /// Seeding through the stack, not straight into the store: the root would merge a direct
    /// store write whenever the store's notification arrives, possibly after a test's own
    /// in-memory saves of the same object (same version), putting the old values back in the
    /// children.
    func seedDevice(_ name: String, connected: Bool = false) throws -> ObjectID {
        let worker = stack.newWorker(name: "seed")
        let id = try worker.performAndWait {
            let device = worker.makeDevice(name)
            device["connected", as: Bool.self] = connected
            try worker.obtainPermanentIDs(for: [device])
            try worker.save()
            return device.objectID
        }
        try stack.saveRoot()
        drain(stack.main)
        return id
    }

    /// The device's name as committed in the store.
    func storedName(of id: ObjectID) throws -> String? {
        guard case .string(let name)? = try store.objects(with: [id]).objects.first?.values["name"] else { return nil }
        return name
    }
}
