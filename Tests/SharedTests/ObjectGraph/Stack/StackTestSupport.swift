import Dispatch
import Foundation
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusReactive
@testable import ContextBusSupport

/// A `ContextStack` on an in-memory (or SQLite) store whose background saves are timed by a
/// `TestScheduler`, so tests decide when the root writes. The stack's store is a `FailingStore`
/// in front of the test store (not failing unless told).
struct StackFixture {
    let testStore: TestStore
    let failingStore: FailingStore
    let timer = TestScheduler()
    let stack: ContextStack
    static let delay: Duration = .milliseconds(100)

    init(_ factory: StoreFactory = .inMemory, workersMergeChanges: Bool = true) throws {
        _ = testMainQueue
        testStore = try factory.make(.deviceReadings)
        failingStore = FailingStore(testStore)
        stack = ContextStack(
            store: failingStore,
            configuration: .init(
                rootSaveDelay: Self.delay, workersMergeChanges: workersMergeChanges, durability: .memory,
                saveTimer: timer))
    }

    var store: any PersistentStore { testStore.store }

    /// Lets the background save fire and waits until the root has run it.
    func fireBackgroundSave() {
        timer.advance(by: Self.delay)
        drain(stack.root)
    }

    /// The number of devices committed to the store.
    func storedDeviceCount() throws -> Int {
        guard case .count(let count) = try store.fetch(FetchRequest(entity: "Device", resultType: .count)).content
        else { return -1 }
        return count
    }
}

/// A store that forwards to another and fails saves while `failing` is set.
final class FailingStore: PersistentStore {
    struct InjectedFailure: Error, CustomStringConvertible {
        var description: String { "injected save failure" }
    }

    let base: any PersistentStore
    private let failingFlag = Locked(false)

    init(_ base: any PersistentStore) { self.base = base }

    var failing: Bool {
        get { failingFlag.withLock { $0 } }
        set { failingFlag.withLock { $0 = newValue } }
    }

    var model: Model { base.model }
    var lastTransaction: Int64 { base.lastTransaction }
    func fetch(_ request: FetchRequest) throws -> StoreFetchResult { try base.fetch(request) }
    func objects(with ids: [ObjectID]) throws -> StoreObjectsResult { try base.objects(with: ids) }
    func save(_ request: SaveRequest) throws -> SaveResult {
        if failing { throw InjectedFailure() }
        return try base.save(request)
    }
    func obtainPermanentIDs(entity: String, count: Int) throws -> [ObjectID] {
        try base.obtainPermanentIDs(entity: entity, count: count)
    }
    func history(since: Int64, limit: Int) throws -> [ChangeSet] { try base.history(since: since, limit: limit) }
    func observeChanges(_ observer: @escaping @Sendable (ChangeSet) -> Void) -> StoreObservation {
        base.observeChanges(observer)
    }
}
