import ContextBus
import ContextBusClient
import Foundation

// The code of docs/from-core-data.md's "Core Data → ContextBus" table, compiled here: each `// row:` below is a row
// of the table (its Core Data cell), and every code span of that row's ContextBus cell appears in the Swift that
// follows it (DocumentationSnippetTests checks both, so the table cannot drift from the API). The in-process rows
// also run, on an in-memory stack; the rows that need a running storesvc (`RemoteStore`) are only compiled.

/// Everything the table's code names, on an in-memory store with the default model.
struct TableScene {
    let store: any PersistentStore = InMemoryStore(model: .deviceReadings)
    let stack: ContextStack
    let context: ObjectContext
    var main: ObjectContext { stack.main }
    let worker: ObjectContext

    init() {
        _ = CoreDataTableSnippets.mainQueue
        stack = ContextStack(store: store)
        context = stack.newWorker(name: "context")
        worker = stack.newWorker(name: "worker")
    }
}

enum CoreDataTableSnippets {
    /// The queue `.mainQueue` contexts use here: the test runner does not run `DispatchQueue.main`.
    static let mainQueue: DispatchQueue = {
        let queue = DispatchQueue(label: "documentation main queue")
        ObjectContext.mainQueue = queue
        return queue
    }()

    // row: `NSPersistentContainer`
    static func persistentContainer(_ scene: TableScene) -> ContextStack {
        let store = scene.store
        return ContextStack(store: store)
    }

    // row: `NSPersistentStoreCoordinator` + `NSPersistentStore` (SQLite)
    static func persistentStores(url: URL) throws -> [any PersistentStore] {
        [try SQLiteStore(url: url, model: .deviceReadings), InMemoryStore(model: .deviceReadings)]
    }

    static func remoteStore(path: String) throws -> RemoteStore {  // compiled only: it needs a running storesvc
        try RemoteStore.openAndWait(socketPath: path)
    }

    // row: `NSManagedObjectContext`, `.privateQueueConcurrencyType` / `.mainQueueConcurrencyType`
    static func contexts(_ scene: TableScene) -> [ObjectContext] {
        let stack = scene.stack
        return [
            ObjectContext(parent: stack.root, concurrency: .privateQueue),
            ObjectContext(parent: stack.root, concurrency: .mainQueue),
        ]
    }

    // row: parent / child contexts
    static func child(_ scene: TableScene) -> ObjectContext {
        let main = scene.main
        return ObjectContext(parent: main)
    }

    // row: `perform`, `performAndWait`, `perform` async
    static func perform(_ scene: TableScene) throws {
        let context = scene.context
        context.perform { context.rollback() }
        try context.performAndWait { try context.save() }
    }

    static func performAsync(_ scene: TableScene) async throws -> Int {
        let worker = scene.worker
        return try await worker.perform { try worker.count(for: Device.fetchRequest()) }
    }

    // row: `NSManagedObject` subclasses that Xcode generates
    static func generatedTypes(_ scene: TableScene) -> [String] {
        scene.context.performAndWait {
            let device: Device = scene.context.insert(Device.self)
            let entities: [any ManagedEntity.Type] = [Device.self, Reading.self]
            return entities.map { $0.entityName } + [device.managedObject.entity.name]
        }
    }

    // row: `Device(context: context)`
    static func insert(_ scene: TableScene) -> Device {
        let context = scene.context
        return context.performAndWait { context.insert(Device.self) }
    }

    // row: `@NSManaged` properties; `reading.device = device`; `addToReadings(_:)`
    static func properties(_ scene: TableScene) -> Int {
        let context = scene.context
        return context.performAndWait {
            let device = context.insert(Device.self)
            let reading = context.insert(Reading.self)
            device.name = "kitchen"
            reading.device = device
            let count = device.readings.count
            device.addToReadings(reading)  // already there: nothing changes
            return count + device.readings.count
        }
    }

    // row: `NSManagedObjectID`, `object(with:)`, `existingObject(with:)`, `obtainPermanentIDs(for:)`
    static func objectIDs(_ scene: TableScene) throws -> [ObjectID] {
        let context = scene.context
        return try context.performAndWait {
            let device = context.insert(Device.self)
            device.address = "AA:BB:CC:DD:EE:01"
            try context.obtainPermanentIDs(for: [device.managedObject])
            let id = device.objectID
            let same = context.object(with: id, as: Device.self)
            let loaded = try context.existingObject(with: id, as: Device.self)
            let permanent = ObjectID(string: "Device/3")
            return [same.objectID, loaded.objectID] + (permanent.map { [$0] } ?? [])
        }
    }

    // row: `NSFetchRequest<Device>`
    static func fetchRequest(_ scene: TableScene) throws -> [Device] {
        let context = scene.context
        let request: TypedFetchRequest<Device> = Device.fetchRequest(sortedBy: [.name])
        return try context.performAndWait { try context.fetch(request) }
    }

    // row: `NSPredicate(format:)` with `$variables`
    static func predicate() throws -> TypedFetchRequest<Reading> {
        try Reading.fetchRequest(where: "number > $min", ["min": .double(20)])
    }

    // row: `NSSortDescriptor(keyPath:ascending:)`
    static func sortKeys() -> [SortKey<Reading>] {
        [.time.descending, .device(.name)]
    }

    // row: `.managedObjectIDResultType`, `.countResultType`
    static func idsAndCounts(_ scene: TableScene) throws -> ([ObjectID], Int) {
        let context = scene.context
        let request = Device.fetchRequest()
        return try context.performAndWait { (try context.fetchIDs(request), try context.count(for: request)) }
    }

    // row: a fetch by a unique constraint (`uniquenessConstraints`)
    static func find(_ scene: TableScene) throws -> Device? {
        let context = scene.context
        return try context.performAndWait { try Device.find(address: "AA:BB:CC:DD:EE:01", in: context) }
    }

    // row: `NSFetchedResultsController` + delegate
    static func liveQuery(_ scene: TableScene) throws -> any Disposable {
        let stack = scene.stack
        let query = try TypedLiveQuery(Device.fetchRequest(sortedBy: [.name]), in: stack.main, sectionedBy: .name)
        return query.updates.startWithValues { update in print(update.objects.map(\.name), update.diff as Any) }
    }

    // row: merge policies
    static func mergePolicies(_ scene: TableScene) -> [MergePolicy] {
        let context = scene.context
        context.mergePolicy = .objectTrump
        return [.error, .storeTrump, .overwrite, .rollback, context.mergePolicy]
    }

    // row: `NSManagedObjectContextDidSave`
    static func didSave(_ scene: TableScene) -> Signal<ChangeSet, Never> {
        let context = scene.context
        return context.didSave
    }

    // row: `mergeChanges(fromContextDidSave:)`
    static func merge(_ scene: TableScene, changes: ChangeSet) {
        let context = scene.context
        context.perform { context.merge(changes) }
    }

    // row: `automaticallyMergesChangesFromParent`
    static func automaticMerges(_ scene: TableScene) {
        let context = scene.context
        context.automaticallyMergesChanges = true
    }

    // row: persistent history (tracking, tokens, change requests)
    static func history(_ scene: TableScene, lastTxn: Int64) throws -> StoreObservation {
        let store = scene.store
        _ = try store.history(since: lastTxn, limit: 100)
        return store.observeChanges { changes in print(changes.txn) }
    }

    // row: the "context directory" of worker contexts
    static func workers(_ scene: TableScene) -> Int {
        let stack = scene.stack
        let importer = stack.newWorker(name: "importer")
        return stack.liveWorkers.count + (importer.name == nil ? 0 : 1)
    }

    // row: `NSOperation` on a private context
    static func operation(_ scene: TableScene) -> ContextOperation {
        let stack = scene.stack
        let importDevices: ContextOperation.Step = { context in _ = context.insert(Device.self) }
        return ContextOperation(
            parent: stack.root, mergingInto: stack.main, steps: [importDevices],
            saveBlock: { _ in try stack.saveRoot() }, completion: { outcome in print(outcome) })
    }

    // row: an object-ID fetch in the background, then `object(with:)` on main
    static func idsInTheBackground(_ scene: TableScene) -> any Disposable {
        let stack = scene.stack
        let main = scene.main
        return stack.fetchIDsInBackground(Reading.fetchRequest())
            .deliver(on: main.scheduler)
            .startWithValues { ids in print(main.objects(with: ids, as: Reading.self).count) }
    }

    // row: `RACSignal` (next / error / completed)
    static func signal() -> Signal<Int, StoreError> {
        Signal<Int, StoreError> { observer, _ in
            observer.send(value: 1)
            observer.sendCompleted()
        }
    }

    static func events(_ event: Event<Int, StoreError>) -> String {
        switch event {
        case .value(let value): return "\(value)"
        case .failed(let error): return "\(error)"
        case .completed, .interrupted: return "end"
        }
    }

    // row: `RACSubscriber`
    static func subscriber(_ observer: Observer<Int, StoreError>) {
        observer.send(value: 1)
        observer.send(error: .unavailable("gone"))
        observer.sendCompleted()
    }

    // row: `subscribeNext:`
    static func subscribeNext(_ signal: Signal<Int, StoreError>) -> any Disposable {
        signal.startWithValues { print($0) }
    }

    // row: `RACDisposable`, `RACCompoundDisposable`, `RACSerialDisposable`
    static func disposables() -> [any Disposable] {
        [AnyDisposable { print("once") }, CompositeDisposable(), SerialDisposable()]
    }

    // row: `RACScheduler`, `deliverOn:`, `subscribeOn:`
    static func schedulers(_ scene: TableScene, _ signal: Signal<Int, StoreError>) -> [Signal<Int, StoreError>] {
        let stack = scene.stack
        _ = TestScheduler()
        return [signal.deliver(on: stack.main.scheduler), signal.start(on: QueueScheduler(name: "work"))]
    }

    // row: a `RACScheduler` on a context's queue
    static func contextScheduler(_ scene: TableScene) -> [any Scheduler] {
        let worker = scene.worker
        return [ContextScheduler(worker), worker.scheduler]
    }

    // row: `startLazilyWithScheduler:block:`
    static func lazy(_ scene: TableScene) -> Signal<Int, Never> {
        let worker = scene.worker
        return Signal<Int, Never>.lazy(on: worker.scheduler) { observer, _ in observer.send(value: 1) }
    }

    // row: `flattenMap:` / `concat` / `switchToLatest`
    static func flatten(_ signal: Signal<Int, StoreError>) -> [Signal<Int, StoreError>] {
        [
            signal.flatMap(.merge) { Signal(value: $0) }, signal.flatMap(.concat) { Signal(value: $0) },
            signal.flatMap(.latest) { Signal(value: $0) },
        ]
    }

    // row: `firstOrDefault:`, `first`
    static func first(_ signal: Signal<Int, StoreError>) async throws -> [Int] {
        if case .failure(.wouldDeadlock) = signal.first() { return [] }
        return [signal.first(or: 0), try signal.first().get(), try await signal.value]
    }

    // row: `retry:`, `timeout:onScheduler:`, `catch:`
    static func recovery(_ signal: Signal<Int, StoreError>) -> [Signal<Int, StoreError>] {
        [
            signal.retry(upTo: 3),
            signal.timeout(after: .seconds(5), raising: .unavailable("timed out"), on: QueueScheduler(name: "timer")),
            signal.flatMapError { _ in Signal(value: 0) },
        ]
    }

    // row: serialising chains on one scheduler
    static func chains(_ chain: Signal<Int, StoreError>) -> Signal<Int, StoreError> {
        let queue = ChainQueue<String>(mode: .perKey, maxConcurrent: 4)
        return queue.enqueue(chain, for: "AA:BB:CC:DD:EE:01")
    }

    // row: Core Data validation / optimistic locking errors
    static func errors(_ error: StoreError) -> String {
        switch error {
        case StoreError.validation(let failures): return "\(failures.count) invalid"
        case StoreError.conflict(let conflicts): return "\(conflicts.count) changed meanwhile"
        default: return "\(error)"
        }
    }
}
