import Dispatch
import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph

struct ObjectContextQueueTests {
    struct Boom: Error, Equatable {}

    @Test func performAndWaitIsReentrantOnItsOwnQueue() throws {
        let fixture = try ContextFixture(.inMemory)
        let context = fixture.makeContext()
        let value = context.performAndWait {
            expectTrue(context.isOnQueue)
            let device = context.makeDevice("outer")
            return context.performAndWait {
                context.performAndWait { device.string("name") }
            }
        }
        expectEqual(value, "outer")
        expectFalse(context.isOnQueue)
    }

    @Test func performAndWaitRethrowsTheBodysError() throws {
        let fixture = try ContextFixture(.inMemory)
        let context = fixture.makeContext()
        #expect(throws: Boom.self) {
            try context.performAndWait { () throws -> Int in throw Boom() }
        }
        // Nested, from inside the queue.
        #expect(throws: Boom.self) {
            try context.performAndWait { try context.performAndWait { () throws in throw Boom() } }
        }
    }

    @Test func performRunsBlocksInOrderOnTheQueue() throws {
        let fixture = try ContextFixture(.inMemory)
        let context = fixture.makeContext()
        let seen = Collected<Int>()
        for i in 0..<50 {
            context.perform {
                expectTrue(context.isOnQueue)
                seen.append(i)
            }
        }
        drain(context)
        expectEqual(seen.all, Array(0..<50))
    }

    @Test func asyncPerformReturnsTheValueAndThrowsTheError() async throws {
        let fixture = try ContextFixture(.inMemory)
        let context = fixture.makeContext()
        let id = try await context.perform {
            let device = context.makeDevice("async")
            try context.save()
            return device.objectID
        }
        expectFalse(id.isTemporary)
        await #expect(throws: Boom.self) {
            try await context.perform { () throws -> Int in throw Boom() }
        }
    }

    @Test func mainQueueContextRunsOnTheDesignatedMainQueue() throws {
        _ = testMainQueue
        let fixture = try ContextFixture(.inMemory)
        let context = ObjectContext(store: fixture.store, concurrency: .mainQueue, name: "main")
        expectTrue(context.queue === testMainQueue)
        let ranOnMain = context.performAndWait {
            context.makeDevice("ui")
            return true
        }
        expectTrue(ranOnMain)
        let onMain = testMainQueue.sync { context.isOnQueue }
        expectTrue(onMain)
    }

    @Test func touchingAnObjectOffItsQueueTrapsInDebugBuilds() async {
        #if DEBUG
        await #expect(processExitsWith: .failure) {
            let store = InMemoryStore(model: .deviceReadings)
            let context = ObjectContext(store: store)
            let device = context.performAndWait { context.insert(entity: "Device") }
            _ = device.string("name")  // not on the context's queue
        }
        #endif
    }

    @Test func callingContextMethodsOffItsQueueTrapsInDebugBuilds() async {
        #if DEBUG
        await #expect(processExitsWith: .failure) {
            let store = InMemoryStore(model: .deviceReadings)
            let context = ObjectContext(store: store)
            _ = context.insert(entity: "Device")
        }
        #endif
    }
}
