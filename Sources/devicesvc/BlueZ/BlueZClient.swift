import ContextBusDBus
import ContextBusReactive
import ContextBusSupport
import Dispatch

/// What changed in BlueZ's object tree, as `BlueZClient` tells its observers (after applying it to the tree).
enum BlueZEvent: Sendable {
    case propertiesChanged(DBusPropertiesChanged)
    /// A characteristic's `Value` signal that was the echo of a `ReadValue` of ours (`ReadEchoFilter`): BlueZ's cache
    /// changed, but it is no notification. Sent just before the read's answer is passed on.
    case readEcho(DBusPropertiesChanged)
    case interfacesAdded(DBusInterfacesAdded)
    case interfacesRemoved(DBusInterfacesRemoved)
    /// BlueZ is on the bus and the tree was (re)loaded from `GetManagedObjects`.
    case appeared
    /// BlueZ left the bus (nobody owns `org.bluez`); the tree is empty until it returns.
    case vanished
}

/// BlueZ as this process sees it: the object tree kept current, and whether BlueZ is on the bus at all.
///
/// ```
///  system bus ─▶ DBusConnection (delivery queue, in arrival order)
///                  ├─ InterfacesAdded / InterfacesRemoved / PropertiesChanged from org.bluez ─▶ tree ─▶ observers
///                  ├─ NameWatcher(org.bluez): owner gone ─▶ empty tree, .vanished
///                  │                          new owner  ─▶ GetManagedObjects ─▶ tree, .appeared
///                  └─ replies of the operations (BlueZClient+Operations)
/// ```
///
/// The match rules name the sender `org.bluez`, which the connection resolves to its current unique name, so
/// they keep working across BlueZ restarts. Signals, the `GetManagedObjects` reply and owner changes are all
/// handled on the connection's delivery queue in the order they arrived, so a snapshot always replaces older
/// signals and is itself updated by newer ones. Observers run on that queue too, after the tree was updated,
/// and must not block it.
final class BlueZClient: Sendable {
    /// The bus connection (shared with nothing else that filters `org.bluez` signals).
    let connection: DBusConnection
    /// Where operation timers run (the services-resolved timeout).
    let scheduler: any Scheduler
    let state = Locked(State())

    struct State {
        var tree = BlueZObjectTree()
        /// Whether `tree` holds a `GetManagedObjects` snapshot of the current owner.
        var isLoaded = false
        var owner: String?
        /// Bumped on every owner change, so that a reload answered for an old owner is dropped.
        var generation: UInt64 = 0
        var observers: [UInt64: @Sendable (BlueZEvent) -> Void] = [:]
        var nextToken: UInt64 = 1
        var subscriptions: [DBusSubscription] = []
        var watcher: NameWatcher?
        var discovery = DiscoveryState()
        var notifySessions = NotifySessionTable()
        var readEchoes = ReadEchoFilter()
    }

    private init(connection: DBusConnection, scheduler: any Scheduler) {
        self.connection = connection
        self.scheduler = scheduler
    }

    /// Starts following BlueZ on `connection`: subscribes to its signals, watches `org.bluez`, and loads the
    /// tree when BlueZ is on the bus (now or later).
    ///
    /// - Throws: `DBusError` or `DBusConnectionError` when the bus refuses the match rules.
    static func start(on connection: DBusConnection, scheduler: any Scheduler) async throws -> BlueZClient {
        let client = BlueZClient(connection: connection, scheduler: scheduler)
        let sender = BlueZ.serviceName
        var subscriptions: [DBusSubscription] = []
        do {
            subscriptions.append(
                try await connection.subscribe(to: DBusInterfacesAdded.rule(sender: sender)) { [weak client] in
                    guard let added = try? DBusInterfacesAdded($0) else { return }
                    client?.apply(.interfacesAdded(added)) { $0.apply(added) }
                })
            subscriptions.append(
                try await connection.subscribe(to: DBusInterfacesRemoved.rule(sender: sender)) { [weak client] in
                    guard let removed = try? DBusInterfacesRemoved($0) else { return }
                    client?.apply(.interfacesRemoved(removed)) { $0.apply(removed) }
                })
            subscriptions.append(
                try await connection.subscribe(
                    to: DBusPropertiesChanged.rule(sender: sender, pathNamespace: BlueZ.rootPath)
                ) { [weak client] in
                    guard let change = try? DBusPropertiesChanged($0) else { return }
                    client?.apply(.propertiesChanged(change)) { $0.apply(change) }
                })
            let watcher = try await NameWatcher.start(watching: sender, on: connection) { [weak client] change in
                client?.ownerChanged(to: change.newOwner)
            }
            client.state.withLock {
                $0.subscriptions = subscriptions
                $0.watcher = watcher
            }
            if let owner = watcher.owner {
                // Hop to the delivery queue, where every later owner change is handled too.
                connection.deliveryQueue.async { client.ownerChanged(to: owner) }
            }
        } catch {
            for subscription in subscriptions { subscription.cancel() }
            throw error
        }
        return client
    }

    /// Stops following BlueZ (the connection stays open).
    func stop() {
        let (subscriptions, watcher) = state.withLock { state in
            defer {
                state.subscriptions = []
                state.watcher = nil
                state.observers = [:]
            }
            return (state.subscriptions, state.watcher)
        }
        for subscription in subscriptions { subscription.cancel() }
        watcher?.cancel()
    }

    // MARK: - State

    /// Whether BlueZ is on the bus and its tree is loaded: what `device.*` needs to answer anything but 503.
    var isAvailable: Bool { state.withLock { $0.owner != nil && $0.isLoaded } }

    /// Whether somebody owns `org.bluez` now (the tree may still be loading).
    var hasOwner: Bool { state.withLock { $0.owner != nil } }

    /// Waits until BlueZ is available (on the bus with its tree loaded), checking every 10 ms.
    ///
    /// - Returns: whether it became available within `timeout`.
    func waitUntilAvailable(timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !isAvailable {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }

    /// A snapshot of the tree.
    var tree: BlueZObjectTree { state.withLock { $0.tree } }

    /// The tree, when BlueZ is available.
    ///
    /// - Throws: `DeviceError.unavailable` when it is not.
    func availableTree() throws(DeviceError) -> BlueZObjectTree {
        let snapshot = state.withLock { state -> BlueZObjectTree? in
            state.owner != nil && state.isLoaded ? state.tree : nil
        }
        guard let snapshot else { throw .unavailable("nobody owns \(BlueZ.serviceName) on the bus") }
        return snapshot
    }

    // MARK: - Observing

    /// Calls `handler` on the delivery queue with every change, after it was applied to the tree.
    ///
    /// - Returns: a disposable that removes the handler.
    func observe(_ handler: @escaping @Sendable (BlueZEvent) -> Void) -> any Disposable {
        let token = state.withLock { state -> UInt64 in
            defer { state.nextToken += 1 }
            state.observers[state.nextToken] = handler
            return state.nextToken
        }
        return AnyDisposable { [weak self] in
            _ = self?.state.withLock { $0.observers.removeValue(forKey: token) }
        }
    }

    // MARK: - Internals (delivery queue)

    /// Applies a signal to the tree, then tells the observers — unless it may be the echo of a read of ours
    /// (`ReadEchoFilter`): they get that one once the next message shows what it was, a notification
    /// (`.propertiesChanged`, before that message) or the read's echo (`.readEcho`).
    private func apply(_ event: BlueZEvent, to update: (inout BlueZObjectTree) -> Void) {
        let (released, isHeld, observers) = state.withLock {
            state -> (BlueZEvent?, Bool, [@Sendable (BlueZEvent) -> Void]) in
            guard state.isLoaded else { return (nil, false, []) }
            update(&state.tree)
            let released = state.readEchoes.release()
            let isHeld = state.readEchoes.hold(event)
            return (released, isHeld, state.observers.sorted { $0.key < $1.key }.map(\.value))
        }
        if let released { for observer in observers { observer(released) } }
        if !isHeld { for observer in observers { observer(event) } }
    }

    /// A `ReadValue` of the characteristic at `path` is about to go out (call on any thread).
    ///
    /// - Returns: the token for `readEnded`.
    func readStarting(at path: DBusObjectPath) -> UInt64 {
        state.withLock { $0.readEchoes.readStarting(at: path) }
    }

    /// The read `token` was answered with `answer` (`nil`: it failed); on the delivery queue, before the answer is
    /// passed on. A held signal goes to the observers now: as `.readEcho` when it was this read's echo.
    func readEnded(_ token: UInt64, answer: [UInt8]?) {
        let (released, observers) = state.withLock { state -> (BlueZEvent?, [@Sendable (BlueZEvent) -> Void]) in
            let released = state.readEchoes.readEnded(token, answer: answer)
            return (released, released == nil ? [] : state.observers.sorted { $0.key < $1.key }.map(\.value))
        }
        if let released { for observer in observers { observer(released) } }
    }

    /// How many read echoes were told apart from notifications (for tests and statistics).
    var readEchoCount: Int { state.withLock { $0.readEchoes.echoes } }

    private func ownerChanged(to owner: String?) {
        let (generation, released, observers) = state.withLock {
            state -> (UInt64, BlueZEvent?, [@Sendable (BlueZEvent) -> Void]) in
            let wasLoaded = state.isLoaded
            state.generation += 1
            state.owner = owner
            state.tree = BlueZObjectTree()
            state.isLoaded = false
            state.discovery = DiscoveryState()
            state.notifySessions.sessions = [:]
            // A signal held back as a possible read echo was the old owner's last word: a notification.
            let released = state.readEchoes.release()
            let observers = wasLoaded ? state.observers.sorted { $0.key < $1.key }.map(\.value) : []
            return (state.generation, released, observers)
        }
        if let released { for observer in observers { observer(released) } }
        for observer in observers { observer(.vanished) }
        if owner != nil { reload(generation: generation) }
    }

    /// Loads the tree with `GetManagedObjects`, applying the answer on the delivery queue.
    private func reload(generation: UInt64) {
        let message = DBusMessage.methodCall(
            destination: BlueZ.serviceName, path: .root, interface: DBusConnection.objectManagerInterface,
            member: "GetManagedObjects")
        connection.call(message, timeout: .seconds(25)) { [weak self] result in
            guard let self else { return }
            guard case .success(let reply) = result, let objects = BlueZClient.managedObjects(in: reply) else {
                // BlueZ left again (a new owner brings a new reload) or answered nonsense: try once more later.
                if case .failure(let error) = result, case .unavailable = DeviceError(callError: error) { return }
                let queue = connection.deliveryQueue
                scheduler.schedule(after: .seconds(1)) { [weak self] in
                    queue.async { [weak self] in self?.retryReload(generation: generation) }
                }
                return
            }
            let observers = state.withLock { state -> [@Sendable (BlueZEvent) -> Void]? in
                guard state.generation == generation else { return nil }
                state.tree = BlueZObjectTree(objects: objects)
                state.isLoaded = true
                return state.observers.sorted { $0.key < $1.key }.map(\.value)
            }
            for observer in observers ?? [] { observer(.appeared) }
        }
    }

    private func retryReload(generation: UInt64) {
        let current = state.withLock { $0.generation == generation && !$0.isLoaded && $0.owner != nil }
        if current { reload(generation: generation) }
    }

    /// Decodes a `GetManagedObjects` reply (`a{oa{sa{sv}}}`).
    static func managedObjects(in reply: DBusMessage) -> DBusManagedObjects? {
        guard reply.bodySignature == "a{oa{sa{sv}}}", let entries = reply.body.first?.dictionaryEntries else {
            return nil
        }
        var objects: DBusManagedObjects = [:]
        for entry in entries {
            guard let path = entry.key.objectPathValue, let interfaces = DBusInterfacesAdded.interfaceMap(entry.value)
            else { return nil }
            objects[path] = interfaces
        }
        return objects
    }
}
