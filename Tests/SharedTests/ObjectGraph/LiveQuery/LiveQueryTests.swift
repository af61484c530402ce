import Dispatch
import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusReactive

struct LiveQueryTests {
    static let connectedByName = FetchRequest(
        entity: "Device", predicate: try! ObjectPredicate(format: "connected == YES"),
        sortDescriptors: [ObjectSortDescriptor("name")])

    /// A started live query in the stack's main context, and a way to change things from a worker.
    struct Harness {
        let fixture: StackFixture
        let updates = Collected<LiveQueryUpdate>()
        let disposable: any Disposable
        var main: ObjectContext { fixture.stack.main }

        init(_ request: FetchRequest, sectionKey: String? = nil, fixture: StackFixture? = nil) throws {
            let fixture = try fixture ?? StackFixture()
            self.fixture = fixture
            let query = try LiveQuery(request, in: fixture.stack.main, sectionKey: sectionKey)
            disposable = query.updates.startWithValues { [updates] in updates.append($0) }
            drain(fixture.stack.main)
        }

        /// Runs `body` in a new worker, saves it, and waits until main has merged and refreshed.
        @discardableResult
        func change<T>(_ body: (ObjectContext) throws -> T) throws -> T {
            let worker = fixture.stack.newWorker()
            let result = try worker.performAndWait {
                let result = try body(worker)
                try worker.save()
                return result
            }
            settle()
            return result
        }

        /// Waits for main's merge, then for the refresh it scheduled.
        func settle() {
            drain(main)
            drain(main)
        }

        /// Names of the objects at `ids`, read in main.
        func names(_ ids: [ObjectID]) -> [String] {
            main.performAndWait { ids.map { main.object(with: $0).string("name") ?? "-" } }
        }

        func name(_ id: ObjectID) -> String { names([id])[0] }
    }

    @Test func itSendsTheResultThenADiffForEachSaveThatChangesIt() throws {
        let fixture = try StackFixture()
        for name in ["b", "d", "f"] { _ = try fixture.seedDevice(name, connected: true) }
        let x = try fixture.seedDevice("x", connected: false)
        let harness = try Harness(Self.connectedByName, fixture: fixture)

        expectEqual(harness.updates.all.count, 1)
        let initial = try #require(harness.updates.all.first)
        expectNil(initial.diff)
        expectEqual(harness.names(initial.snapshot.objectIDs), ["b", "d", "f"])

        // Insert.
        let c = try harness.change { $0.makeDevice("c", connected: true).objectID }
        var diff = try #require(harness.updates.all.last?.diff)
        expectEqual(diff.inserted.map(\.path), [LiveQueryIndexPath(section: 0, item: 1)])
        expectEqual(harness.name(diff.inserted[0].objectID), "c")
        expectTrue(diff.deleted.isEmpty && diff.moved.isEmpty && diff.updated.isEmpty)
        _ = c

        // A rename that moves b to the end.
        let b = initial.snapshot.objectIDs[0]
        try harness.change { try $0.existingObject(with: b)["name", as: String.self] = "z" }
        diff = try #require(harness.updates.all.last?.diff)
        expectEqual(diff.moved.count, 1)
        expectEqual(diff.moved.first?.from, LiveQueryIndexPath(section: 0, item: 0))
        expectEqual(diff.moved.first?.to, LiveQueryIndexPath(section: 0, item: 3))
        expectTrue(diff.inserted.isEmpty && diff.deleted.isEmpty && diff.updated.isEmpty)

        // A change that keeps d in place.
        let d = initial.snapshot.objectIDs[1]
        try harness.change {
            try $0.existingObject(with: d)["lastSeen", as: Date.self] = Date(timeIntervalSince1970: 5)
        }
        diff = try #require(harness.updates.all.last?.diff)
        expectEqual(diff.updated, [.init(path: LiveQueryIndexPath(section: 0, item: 1), objectID: d)])
        expectTrue(diff.inserted.isEmpty && diff.deleted.isEmpty && diff.moved.isEmpty)

        // A delete, and an object that starts to match.
        let f = initial.snapshot.objectIDs[2]
        try harness.change { worker in
            worker.delete(try worker.existingObject(with: f))
            try worker.existingObject(with: x)["connected", as: Bool.self] = true
        }
        diff = try #require(harness.updates.all.last?.diff)
        expectEqual(diff.deleted, [.init(path: LiveQueryIndexPath(section: 0, item: 2), objectID: f)])
        expectEqual(diff.inserted, [.init(path: LiveQueryIndexPath(section: 0, item: 2), objectID: x)])
        let final = try #require(harness.updates.all.last)
        expectEqual(harness.names(final.snapshot.objectIDs), ["c", "d", "x", "z"])

        // A change to an object outside the result sends nothing.
        let count = harness.updates.all.count
        let y = try harness.change { $0.makeDevice("y", connected: false).objectID }
        expectEqual(harness.updates.all.count, count)
        _ = y
        harness.disposable.dispose()
    }

    @Test func sectionsAppearAndDisappearWithTheirObjects() throws {
        let fixture = try StackFixture()
        let a = try fixture.seedDevice("a", connected: false)
        _ = try fixture.seedDevice("b", connected: false)
        let request = FetchRequest(
            entity: "Device", sortDescriptors: [ObjectSortDescriptor("connected"), ObjectSortDescriptor("name")])
        let harness = try Harness(request, sectionKey: "connected", fixture: fixture)
        let initial = try #require(harness.updates.all.first)
        expectEqual(initial.snapshot.sections.map(\.name), ["false"])

        try harness.change { try $0.existingObject(with: a)["connected", as: Bool.self] = true }
        var update = try #require(harness.updates.all.last)
        var diff = try #require(update.diff)
        expectEqual(update.snapshot.sections.map(\.value), [.bool(false), .bool(true)])
        expectEqual(diff.insertedSections, [.init(index: 1, value: .bool(true))])
        expectEmpty(diff.deletedSections)
        expectEqual(
            diff.moved,
            [
                .init(
                    from: LiveQueryIndexPath(section: 0, item: 0), to: LiveQueryIndexPath(section: 1, item: 0),
                    objectID: a)
            ])

        let b = update.snapshot.sections[0].objectIDs[0]
        try harness.change { worker in
            try worker.existingObject(with: b)["connected", as: Bool.self] = true
        }
        update = try #require(harness.updates.all.last)
        diff = try #require(update.diff)
        expectEqual(update.snapshot.sections.map(\.name), ["true"])
        expectEqual(diff.deletedSections, [.init(index: 0, value: .bool(false))])
        expectEmpty(diff.insertedSections)
        expectEqual(harness.names(update.snapshot.sections[0].objectIDs), ["a", "b"])
        expectEqual(initial.snapshot.applying(harness.updates.all[1].diff!).applying(diff), update.snapshot)
    }

    @Test func aSectionKeyThatIsNotTheFirstSortKeyIsRefused() throws {
        let fixture = try StackFixture()
        #expect(throws: LiveQueryError.sectionKeyNotFirstSortKey(sectionKey: "connected", firstSortKey: "name")) {
            try LiveQuery(Self.connectedByName, in: fixture.stack.main, sectionKey: "connected")
        }
        let unsorted = FetchRequest(entity: "Device")
        #expect(throws: LiveQueryError.self) {
            try LiveQuery(unsorted, in: fixture.stack.main, sectionKey: "name")
        }
    }

    @Test func anInvalidRequestFailsTheSignal() throws {
        let fixture = try StackFixture()
        let query = try LiveQuery(FetchRequest(entity: "Nope"), in: fixture.stack.main)
        let result = query.updates.first()
        guard case .failure(.failed(.invalidRequest)) = result else {
            Issue.record("expected an invalid request failure, got \(result)")
            return
        }
    }

    @Test func theRootGivingObjectsPermanentIDsSendsNoDiff() throws {
        let harness = try Harness(Self.connectedByName)
        let temporary = try harness.change { $0.makeDevice("new", connected: true).objectID }
        expectTrue(temporary.isTemporary)
        expectEqual(harness.updates.all.last?.snapshot.objectIDs, [temporary])
        let count = harness.updates.all.count

        harness.fixture.fireBackgroundSave()
        harness.settle()
        expectEqual(harness.updates.all.count, count)

        // The next change is diffed against the renamed object: it stays, one insert.
        try harness.change { $0.makeDevice("other", connected: true) }
        let diff = try #require(harness.updates.all.last?.diff)
        expectTrue(diff.deleted.isEmpty && diff.moved.isEmpty)
        expectEqual(diff.inserted.count, 1)
        let ids = try #require(harness.updates.all.last?.snapshot.objectIDs)
        expectEqual(harness.names(ids), ["new", "other"])
        expectFalse(ids[0].isTemporary)
    }

    @Test func aQueryOnTheRootSeesItsChildrensSaves() throws {
        let fixture = try StackFixture()
        let updates = Collected<LiveQueryUpdate>()
        let query = try LiveQuery(Self.connectedByName, in: fixture.stack.root)
        let disposable = query.updates.startWithValues { updates.append($0) }
        defer { disposable.dispose() }
        drain(fixture.stack.root)
        let worker = fixture.stack.newWorker()
        try worker.performAndWait {
            worker.makeDevice("w", connected: true)
            try worker.save()
        }
        drain(fixture.stack.root)
        expectEqual(updates.all.count, 2)
        expectEqual(updates.all.last?.diff?.inserted.count, 1)
    }

    @Test func disposingStopsTheUpdates() throws {
        let harness = try Harness(Self.connectedByName)
        harness.disposable.dispose()
        try harness.change { $0.makeDevice("late", connected: true) }
        expectEqual(harness.updates.all.count, 1)
    }
}

extension ObjectContext {
    /// A new device with a `connected` flag; on the context's queue.
    @discardableResult
    func makeDevice(_ name: String, connected: Bool) -> ManagedObject {
        let device = makeDevice(name)
        device["connected", as: Bool.self] = connected
        return device
    }
}
