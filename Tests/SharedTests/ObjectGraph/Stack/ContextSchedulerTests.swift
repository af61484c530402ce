import Dispatch
import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusReactive

struct ContextSchedulerTests {
    @Test func deliverOnAContextSchedulerLetsMapCreateObjectsInTheWorker() throws {
        let fixture = try StackFixture()
        let worker = fixture.stack.newWorker()
        let names = ["alpha", "beta", "gamma"]
        let ids = try Signal<String, Never>(values: names)
            .deliver(on: ContextScheduler(worker))
            .map { name -> ObjectID in
                precondition(worker.isOnQueue, "map ran off the worker's queue")
                return worker.makeDevice(name).objectID
            }
            .collect()
            .first()
            .get()
        expectEqual(ids.count, 3)
        expectTrue(ids.allSatisfy { $0.isTemporary })
        let inserted = worker.performAndWait { worker.insertedObjects.compactMap { $0.string("name") }.sorted() }
        expectEqual(inserted, names)

        try worker.performAndWait { try worker.save() }
        try fixture.stack.saveRoot()
        try expectEqual(fixture.storedDeviceCount(), 3)
    }

    @Test func aBlockDisposedBeforeItRunsIsSkipped() throws {
        let fixture = try StackFixture()
        let worker = fixture.stack.newWorker()
        let scheduler = ContextScheduler(worker)
        let gate = DispatchSemaphore(value: 0)
        worker.perform { gate.wait() }  // hold the queue so the blocks below wait
        let ran = Collected<String>()
        let skipped = scheduler.schedule { ran.append("disposed") }
        scheduler.schedule { ran.append("kept") }
        skipped?.dispose()
        gate.signal()
        drain(worker)
        expectEqual(ran.all, ["kept"])
    }

    @Test func blocksRunInOrderOnTheContextsQueue() throws {
        let fixture = try StackFixture()
        let worker = fixture.stack.newWorker()
        let scheduler = ContextScheduler(worker)
        let seen = Collected<Int>()
        for i in 0..<100 {
            scheduler.schedule {
                precondition(worker.isOnQueue)
                seen.append(i)
            }
        }
        drain(worker)
        expectEqual(seen.all, Array(0..<100))
    }

    @Test func aTimedBlockRunsOnTheContextsQueue() throws {
        let fixture = try StackFixture()
        let worker = fixture.stack.newWorker()
        let scheduler = ContextScheduler(worker)
        let done = DispatchSemaphore(value: 0)
        let onQueue = Collected<Bool>()
        scheduler.schedule(after: .milliseconds(1)) {
            onQueue.append(scheduler.isCurrent && worker.isOnQueue)
            done.signal()
        }
        expectEqual(done.wait(timeout: .now() + patience), .success)
        expectEqual(onQueue.all, [true])
    }

    @Test func blockingFirstRefusesToWaitOnTheContextsOwnQueue() throws {
        let fixture = try StackFixture()
        let worker = fixture.stack.newWorker()
        let result = worker.performAndWait {
            Signal<Int, Never>(value: 1).deliver(on: worker.scheduler).first()
        }
        guard case .failure(.wouldDeadlock) = result else {
            Issue.record("expected wouldDeadlock, got \(result)")
            return
        }
        expectFalse(worker.scheduler.isCurrent)
    }
}
