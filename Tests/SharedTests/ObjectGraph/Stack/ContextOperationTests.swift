import Dispatch
import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSupport

struct ContextOperationTests {
    /// A root on a store and a main child that does not merge by itself, so the operation's
    /// own merge is what updates it.
    struct Fixture {
        let testStore: TestStore
        let root: ObjectContext
        let main: ObjectContext

        init() throws {
            _ = testMainQueue
            testStore = try StoreFactory.inMemory.make(.deviceReadings)
            root = ObjectContext(store: testStore, name: "root")
            main = ObjectContext(parent: root, concurrency: .mainQueue, name: "main")
        }

        func storedDeviceCount() throws -> Int {
            guard
                case .count(let count) = try testStore.fetch(FetchRequest(entity: "Device", resultType: .count)).content
            else { return -1 }
            return count
        }
    }

    @Test func stepsRunThenTheSaveIsMergedIntoMainThenTheSaveBlockAndCompletionRun() throws {
        let fixture = try Fixture()
        let (root, main) = (fixture.root, fixture.main)
        let id = try fixture.testStore.insert("Device", ["address": .string("AA"), "name": .string("old")])
        _ = try main.performAndWait { try main.existingObject(with: id) }
        let log = Collected<String>()
        let operation = ContextOperation(
            parent: root, mergingInto: main,
            steps: [
                { context in
                    log.append("step 1 on its queue: \(context.isOnQueue)")
                    try context.existingObject(with: id)["name", as: String.self] = "renamed"
                },
                { context in
                    log.append("step 2")
                    context.makeDevice("new")
                },
            ],
            saveBlock: { changes in
                let seenByMain = main.performAndWait { main.registeredObject(for: id)?.string("name") }
                log.append("save block: \(changes.inserted.count) inserted, main sees \(seenByMain ?? "nil")")
                try root.performAndWait { try root.save() }
            },
            completion: { outcome in log.append("completion: \(outcome)") })
        let queue = OperationQueue()
        queue.addOperation(operation)
        queue.waitUntilAllOperationsAreFinished()

        expectEqual(
            log.all,
            [
                "step 1 on its queue: true", "step 2", "save block: 1 inserted, main sees renamed",
                "completion: saved (1 inserted, 1 updated, 0 deleted)",
            ])
        guard case .saved = operation.outcome else {
            Issue.record("outcome \(String(describing: operation.outcome))")
            return
        }
        expectTrue(operation.isFinished)
        expectFalse(operation.isExecuting)
        try expectEqual(fixture.storedDeviceCount(), 2)
    }

    @Test func cancellingBetweenStepsSkipsTheRestAndSavesNothing() throws {
        let fixture = try Fixture()
        let inFirstStep = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let log = Collected<String>()
        let operation = ContextOperation(
            parent: fixture.root, mergingInto: fixture.main,
            steps: [
                { context in
                    context.makeDevice("half-done")
                    log.append("step 1")
                    inFirstStep.signal()
                    proceed.wait()
                },
                { _ in log.append("step 2") },
            ],
            saveBlock: { _ in log.append("save block") },
            completion: { outcome in log.append("completion: \(outcome)") })
        let queue = OperationQueue()
        queue.addOperation(operation)
        expectEqual(inFirstStep.wait(timeout: .now() + patience), .success)
        expectTrue(operation.isExecuting)
        operation.cancel()
        proceed.signal()
        queue.waitUntilAllOperationsAreFinished()

        expectEqual(log.all, ["step 1", "completion: cancelled"])
        expectFalse(fixture.root.performAndWait { fixture.root.hasChanges })
        expectFalse(operation.context.performAndWait { operation.context.hasChanges })
        expectTrue(operation.isFinished)
    }

    @Test func anOperationCancelledBeforeItStartsRunsNoStep() throws {
        let fixture = try Fixture()
        let log = Collected<String>()
        let queue = OperationQueue()
        queue.isSuspended = true
        let operation = ContextOperation(
            parent: fixture.root, steps: [{ _ in log.append("step") }],
            completion: { outcome in log.append("completion: \(outcome)") })
        queue.addOperation(operation)
        operation.cancel()
        queue.isSuspended = false
        queue.waitUntilAllOperationsAreFinished()
        expectEqual(log.all, ["completion: cancelled"])
        expectTrue(operation.isFinished)
    }

    @Test func aThrowingStepFailsTheOperationAndRollsBack() throws {
        struct Broken: Error {}
        let fixture = try Fixture()
        let operation = ContextOperation(
            parent: fixture.root,
            steps: [
                { context in context.makeDevice("doomed") },
                { _ in throw Broken() },
            ])
        let queue = OperationQueue()
        queue.addOperation(operation)
        queue.waitUntilAllOperationsAreFinished()
        guard case .failed(let error) = operation.outcome else {
            Issue.record("outcome \(String(describing: operation.outcome))")
            return
        }
        expectTrue(error is Broken)
        expectFalse(fixture.root.performAndWait { fixture.root.hasChanges })
    }

    @Test func dependenciesRunOperationsInOrderWhateverTheOrderAdded() throws {
        let fixture = try Fixture()
        let log = Collected<String>()
        func operation(_ name: String) -> ContextOperation {
            ContextOperation(
                parent: fixture.root, name: name,
                steps: [
                    { context in
                        log.append("\(name) runs")
                        context.makeDevice(name)
                    }
                ],
                completion: { _ in log.append("\(name) done") })
        }
        let (a, b, c) = (operation("a"), operation("b"), operation("c"))
        b.addDependency(a)
        c.addDependency(b)
        let queue = OperationQueue()
        queue.addOperations([c, b, a], waitUntilFinished: true)
        expectEqual(log.all, ["a runs", "a done", "b runs", "b done", "c runs", "c done"])
        expectEqual(fixture.root.performAndWait { fixture.root.insertedObjects.count }, 3)
    }

    @Test func maxConcurrentOperationCountCapsTheOperationsExecutingAtOnce() throws {
        let fixture = try Fixture()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 2
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let inFlight = Locked((now: 0, most: 0))
        let operations = (0..<6).map { i in
            ContextOperation(
                parent: fixture.root, name: "op\(i)",
                steps: [
                    { context in
                        inFlight.withLock {
                            $0.now += 1; $0.most = max($0.most, $0.now)
                        }
                        started.signal()
                        release.wait()
                        context.makeDevice("d\(i)")
                        inFlight.withLock { $0.now -= 1 }
                    }
                ])
        }
        queue.addOperations(operations, waitUntilFinished: false)
        // Two start; a third must not, while both are still executing.
        expectEqual(started.wait(timeout: .now() + patience), .success)
        expectEqual(started.wait(timeout: .now() + patience), .success)
        expectEqual(started.wait(timeout: .now() + .milliseconds(200)), .timedOut)
        expectEqual(inFlight.withLock { $0.now }, 2)
        expectEqual(queue.operations.filter(\.isExecuting).count, 2)
        // Each operation that finishes frees one slot for the next.
        for _ in 0..<4 {
            release.signal()
            expectEqual(started.wait(timeout: .now() + patience), .success)
        }
        release.signal()
        release.signal()
        queue.waitUntilAllOperationsAreFinished()
        expectEqual(inFlight.withLock { $0.most }, 2)
        expectTrue(operations.allSatisfy { if case .saved = $0.outcome { true } else { false } })
        expectEqual(fixture.root.performAndWait { fixture.root.insertedObjects.count }, 6)
    }

    @Test func aSerialQueueRunsOperationsOneAtATimeInTheOrderAdded() throws {
        let fixture = try Fixture()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let log = Collected<Int>()
        let inFlight = Locked((now: 0, most: 0))
        let operations = (0..<8).map { i in
            ContextOperation(
                parent: fixture.root,
                steps: [
                    { _ in
                        inFlight.withLock {
                            $0.now += 1; $0.most = max($0.most, $0.now)
                        }
                        log.append(i)
                        inFlight.withLock { $0.now -= 1 }
                    }
                ])
        }
        queue.addOperations(operations, waitUntilFinished: true)
        expectEqual(log.all, Array(0..<8))
        expectEqual(inFlight.withLock { $0.most }, 1)
    }
}
