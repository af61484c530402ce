import ContextBusReactive

/// The classic Core Data stack for one process: a private-queue *root* context that owns the
/// store and writes to it in the background, a *main* context (`.mainQueue`) as its child, and
/// short-lived *worker* contexts, also children of the root.
///
/// ```
///                 store (SQLiteStore / InMemoryStore / RemoteStore)
///                   ▲ background save (coalesced), saveRoot(), shutdown()
///           ┌───────────────┐
///           │ root (writer) │ private queue
///           └───────────────┘
///             ▲ save        ▲ save (in memory)
///     ┌──────────────┐  ┌──────────┐ ┌──────────┐
///     │ main (.main) │  │ worker 1 │ │ worker 2 │ …  (weak directory)
///     └──────────────┘  └──────────┘ └──────────┘
///        ◀── every child save is merged into main (and into live workers) at once
/// ```
///
/// - A worker's (or main's) `save()` is cheap: it hands its changes to the root in memory. The
///   main context merges them at once (asynchronously on its queue, `automaticallyMergesChanges`);
///   so do live workers unless `Configuration.workersMergeChanges` is off.
/// - The root then writes to the store `Configuration.rootSaveDelay` after the first unsaved child
///   save: saves that arrive meanwhile are written in the same store transaction (coalesced; a
///   steady stream of saves still gets written every `rootSaveDelay`, it is not starved).
/// - `saveRoot()` (sync or async) writes at once; `shutdown()` stops background saving and writes
///   what is left. A background save that fails is sent on `saveErrors`; the root keeps its
///   changes and tries again at the next child save or `saveRoot()`.
///
/// ```swift
/// let stack = ContextStack(store: try SQLiteStore(url: url, model: .deviceReadings))
/// let failures = stack.saveErrors.startWithValues { log("background save failed: \($0)") }
/// let worker = stack.newWorker()
/// try worker.performAndWait {
///     worker.insert(entity: "Device")["address", as: String.self] = "AA:BB"
///     try worker.save()                    // into the root, merged into main
/// }
/// ShutdownSignals.install { _ in try? stack.shutdown() }
/// ```
public final class ContextStack: Sendable {
    /// How a stack saves and merges.
    public struct Configuration: Sendable {
        /// How long after the first unsaved child save the root writes to the store.
        public var rootSaveDelay: Duration
        /// Whether live workers merge the saves of main, of other workers and of the root
        /// (Core Data's `automaticallyMergesChangesFromParent` on every worker). Main always does.
        public var workersMergeChanges: Bool
        /// Whether the root merges changes other writers commit to the store (a shared store).
        public var rootMergesStoreChanges: Bool
        /// How the root's saves are acknowledged by the store.
        public var durability: Durability
        /// Where the delay before a background save is timed; a `QueueScheduler` by default
        /// (tests pass a `TestScheduler`). The save itself always runs on the root's queue.
        public var saveTimer: (any Scheduler)?

        public init(
            rootSaveDelay: Duration = .milliseconds(100), workersMergeChanges: Bool = true,
            rootMergesStoreChanges: Bool = true, durability: Durability = .disk, saveTimer: (any Scheduler)? = nil
        ) {
            self.rootSaveDelay = rootSaveDelay
            self.workersMergeChanges = workersMergeChanges
            self.rootMergesStoreChanges = rootMergesStoreChanges
            self.durability = durability
            self.saveTimer = saveTimer
        }
    }

    /// The store the root writes to.
    public let store: any PersistentStore
    /// The private-queue context that owns the store: the only writer.
    public let root: ObjectContext
    /// The `.mainQueue` child of the root (on `ObjectContext.mainQueue`); merges every child save.
    public let main: ObjectContext
    /// The settings the stack was made with.
    public let configuration: Configuration

    let directory = WorkerDirectory()
    let saver: RootSaver
    private let childSaves: StoreObservation

    /// Makes the root on `store` and the main context under it.
    public init(store: any PersistentStore, configuration: Configuration = Configuration()) {
        self.store = store
        self.configuration = configuration
        root = ObjectContext(store: store, concurrency: .privateQueue, name: "root")
        root.durability = configuration.durability
        if configuration.rootMergesStoreChanges { root.automaticallyMergesChanges = true }
        main = ObjectContext(parent: root, concurrency: .mainQueue, name: "main")
        main.automaticallyMergesChanges = true
        let saver = RootSaver(
            root: root, delay: configuration.rootSaveDelay,
            timer: configuration.saveTimer ?? QueueScheduler(name: "ContextBus.ContextStack.saveTimer"))
        self.saver = saver
        // A child's save reaches the root as a parent event with an origin (the child).
        childSaves = root.childEvents.add { [weak saver] event in
            guard event.origin != nil else { return }
            saver?.rootHasChanges()
        }
    }

    deinit {
        childSaves.cancel()
        saver.stop()
    }

    // MARK: - Workers

    /// A new private-queue worker context, a child of the root, kept in the stack's weak
    /// directory until released. Its saves go to the root and are merged into main (and into
    /// other live workers when `workersMergeChanges`).
    public func newWorker(name: String? = nil) -> ObjectContext {
        let worker = ObjectContext(parent: root, concurrency: .privateQueue, name: name ?? directory.nextName())
        if configuration.workersMergeChanges { worker.automaticallyMergesChanges = true }
        directory.add(worker)
        return worker
    }

    /// The workers made by `newWorker` that are still alive (a released worker is gone).
    public var liveWorkers: [ObjectContext] { directory.live }

    // MARK: - Saving the root

    /// Writes the root's unsaved changes to the store now, on the root's queue, and waits.
    ///
    /// - Throws: what the store throws (`StoreError`); the root keeps its changes.
    public func saveRoot() throws {
        saver.cancelPending()
        try root.performAndWait { try root.save() }
    }

    /// Writes the root's unsaved changes to the store now, without blocking the calling thread.
    ///
    /// - Throws: what the store throws (`StoreError`); the root keeps its changes.
    public func saveRoot() async throws {
        saver.cancelPending()
        let root = self.root
        try await root.perform { try root.save() }
    }

    /// Stops background saving and writes what the root holds (call once, when the process ends;
    /// `ShutdownSignals` does it on SIGTERM / SIGINT). Children may still save into the root, but
    /// only `saveRoot()` writes it from now on.
    ///
    /// - Throws: what the store throws.
    public func shutdown() throws {
        saver.stop()
        try root.performAndWait { try root.save() }
    }

    /// Every background save of the root that failed, as a hot signal: a started signal receives
    /// the failures that happen while it is started, on the root's queue. Never terminates.
    public var saveErrors: Signal<RootSaveFailure, Never> {
        Signal { [saver] observer, lifetime in
            let observation = saver.failures.add { observer.send(value: $0) }
            lifetime.observeEnded { observation.cancel() }
        }
    }
}

/// A background save of a `ContextStack`'s root that the store refused.
public struct RootSaveFailure: Error, Sendable, CustomStringConvertible {
    /// What the store threw (a `StoreError` for the stores in this package).
    public var error: any Error
    /// How many objects the root still holds unsaved (it keeps them for the next attempt).
    public var unsavedObjects: Int

    public init(error: any Error, unsavedObjects: Int) {
        self.error = error
        self.unsavedObjects = unsavedObjects
    }

    public var description: String {
        "background save of the root failed (\(unsavedObjects) objects kept unsaved): \(error)"
    }
}
