import ContextBusSupport
public import Dispatch

/// A scratch pad of managed objects on one serial queue: Core Data's `NSManagedObjectContext`.
///
/// A context is either *top-level* (made with a store: it saves into the store and fetches
/// from it) or a *child* (made with a parent context: its `save()` hands its changes to the
/// parent in memory, and its faults and fetches read through the parent). Its objects, and
/// every method below the "on the context's queue" mark, may only be used on the context's
/// queue: inside `perform(_:)`, `performAndWait(_:)` or `await perform(_:)`. Debug builds trap
/// otherwise. The context itself, object IDs and change sets may cross threads.
///
/// ```swift
/// let root = ObjectContext(store: store, name: "root")
/// let main = ObjectContext(parent: root, concurrency: .mainQueue)
/// try main.performAndWait {
///     let device = main.insert(entity: "Device")
///     device["address", as: String.self] = "AA:BB:CC:DD:EE:FF"
///     try main.save()          // into root, in memory
/// }
/// try root.performAndWait { try root.save() }   // into the store
/// ```
public final class ObjectContext: Sendable {
    /// Which queue a context runs its work on.
    public enum ConcurrencyType: Sendable, Hashable {
        /// A serial queue of the context's own.
        case privateQueue
        /// The queue the program designates as main (`ObjectContext.mainQueue`).
        case mainQueue
    }

    /// The context's name: the `author` of its saves.
    public let name: String?
    /// The kind of queue the context runs on.
    public let concurrencyType: ConcurrencyType
    /// The model of the context's objects.
    public let model: Model
    /// The parent context of a child context; `nil` for a top-level one.
    public let parent: ObjectContext?
    /// The store at the top of the context's chain.
    public let rootStore: any PersistentStore
    /// The serial queue the context's work runs on.
    public let queue: DispatchQueue

    let queueKey: DispatchSpecificKey<UInt8>
    private let confined: QueueConfined<ContextCore>
    let settings: Locked<Settings>
    /// Every save of this context (`didSave`).
    let saves = Broadcaster<ChangeSet>()
    /// What this context's children may merge: its saves, its children's saves, its merges.
    let childEvents = Broadcaster<ParentEvent>()

    struct Settings {
        var mergePolicy: MergePolicy = .error
        var durability: Durability = .disk
        var automaticallyMergesChanges = false
        var observation: StoreObservation?
    }

    /// A top-level context that saves into and fetches from `store`.
    public convenience init(
        store: any PersistentStore, concurrency: ConcurrencyType = .privateQueue, name: String? = nil
    ) {
        self.init(source: .store(store), model: store.model, rootStore: store, concurrency: concurrency, name: name)
    }

    /// A child context whose saves go to `parent`, in memory.
    public convenience init(parent: ObjectContext, concurrency: ConcurrencyType = .privateQueue, name: String? = nil) {
        self.init(
            source: .parent(parent), model: parent.model, rootStore: parent.rootStore, concurrency: concurrency,
            name: name)
    }

    private init(
        source: ContextCore.Source, model: Model, rootStore: any PersistentStore, concurrency: ConcurrencyType,
        name: String?
    ) {
        self.name = name
        self.concurrencyType = concurrency
        self.model = model
        self.rootStore = rootStore
        if case .parent(let parent) = source { self.parent = parent } else { self.parent = nil }
        switch concurrency {
        case .privateQueue: queue = DispatchQueue(label: "ContextBus.ObjectContext.\(name ?? "unnamed")")
        case .mainQueue: queue = ObjectContext.mainQueue
        }
        let key = DispatchSpecificKey<UInt8>()
        queue.setSpecific(key: key, value: 1)
        queueKey = key
        let core = ContextCore(model: model, source: source, queueKey: key)
        confined = QueueConfined(core, key: key, label: "ObjectContext \(name ?? "unnamed")")
        settings = Locked(Settings())
        core.context = self
    }

    deinit {
        settings.withLock { $0.observation }?.cancel()
        if concurrencyType == .mainQueue { queue.setSpecific(key: queueKey, value: nil) }
    }

    /// The queue `.mainQueue` contexts made from now on use; `DispatchQueue.main` unless changed.
    public static var mainQueue: DispatchQueue {
        get { designatedMainQueue.withLock { $0 } }
        set { designatedMainQueue.withLock { $0 = newValue } }
    }

    private static let designatedMainQueue = Locked(DispatchQueue.main)

    /// The context's state; only on the context's queue.
    var core: ContextCore { confined.value }

    /// Whether the calling code runs on the context's queue.
    public var isOnQueue: Bool { DispatchQueue.getSpecific(key: queueKey) != nil }

    // MARK: - Settings (any thread)

    /// How a top-level save resolves version conflicts, and how `merge(_:)` treats the context's
    /// own unsaved changes (`storeTrump` and `rollback` give them up; the others keep them).
    public var mergePolicy: MergePolicy {
        get { settings.withLock { $0.mergePolicy } }
        set { settings.withLock { $0.mergePolicy = newValue } }
    }

    /// How a top-level save is acknowledged by the store.
    public var durability: Durability {
        get { settings.withLock { $0.durability } }
        set { settings.withLock { $0.durability = newValue } }
    }

    // MARK: - Running work on the queue

    /// Runs `block` on the context's queue, later; returns at once.
    public func perform(_ block: @escaping @Sendable () -> Void) {
        queue.async(execute: block)
    }

    /// Runs `body` on the context's queue and waits for it; runs it at once when already there
    /// (so nested calls do not deadlock).
    ///
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws.
    public func performAndWait<T>(_ body: () throws -> T) rethrows -> T {
        if isOnQueue { return try body() }
        return try queue.sync(execute: body)
    }

    /// Runs `body` on the context's queue and returns its result to the awaiting task.
    ///
    /// - Throws: what `body` throws.
    public func perform<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withLockedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }
}

/// What a parent tells its children: a change set they may merge, with the temporary IDs it
/// replaced, and which child's save it came from (that child does not merge it again).
struct ParentEvent: Sendable {
    var changes: ChangeSet
    var idMap: [ObjectID: ObjectID]
    var origin: ObjectIdentifier?
}
