import ContextBusSupport
import Dispatch

/// Tracks the current owner of a well-known bus name (such as `org.bluez`), including its appearing,
/// disappearing and changing hands.
///
/// Signals from a service carry its unique name (`:1.5`), so the BlueZ layer needs to know which unique name
/// `org.bluez` currently is, and to notice when BlueZ restarts (a new owner) or goes away (no owner). The watcher
/// follows `NameOwnerChanged` for the name, seeded by `GetNameOwner`; changes are reported on the connection's
/// delivery queue in order with signals.
///
/// ```swift
/// let bluez = try await NameWatcher.start(watching: "org.bluez", on: connection) { change in
///     if change.newOwner == nil { /* BlueZ went away: fail the running chains */ }
/// }
/// let owner = try await bluez.waitForOwner(timeout: .seconds(5))
/// ```
package final class NameWatcher: Sendable {
    /// One change of owner.
    package struct Change: Sendable, Hashable {
        let name: String
        /// The unique name that owned the name before; `nil` when nobody did.
        let oldOwner: String?
        /// The unique name that owns it now; `nil` when nobody does.
        package let newOwner: String?
    }

    /// Why `waitForOwner` failed.
    package enum WaitError: Error, Hashable, Sendable, CustomStringConvertible {
        case timedOut(name: String, after: Duration)
        case cancelled(name: String)

        package var description: String {
            switch self {
            case .timedOut(let name, let after): return "\(name) did not appear on the bus within \(after)"
            case .cancelled(let name): return "stopped watching \(name)"
            }
        }
    }

    /// The watched name.
    package let name: String
    private let storage = Locked(Storage())
    private let observationStorage = Locked<DBusOwnerObservation?>(nil)
    private let disconnectToken = Locked<(DBusConnection, UInt64)?>(nil)

    private struct Storage {
        var owner: String?
        var hasChangeSinceStart = false
        var isFinished = false
        var waiters: [UInt64: LockedContinuation<String, any Error>] = [:]
        var nextWaiter: UInt64 = 0
        var onChange: (@Sendable (Change) -> Void)?
    }

    private init(name: String, onChange: (@Sendable (Change) -> Void)?) {
        self.name = name
        storage.withLock { $0.onChange = onChange }
    }

    /// Starts watching `name`; `onChange` runs on the connection's delivery queue after each change.
    ///
    /// - Throws: `DBusError` or `DBusConnectionError` when the match rule or the first `GetNameOwner` fails.
    package static func start(
        watching name: String, on connection: DBusConnection, onChange: (@Sendable (Change) -> Void)? = nil
    ) async throws -> NameWatcher {
        let watcher = NameWatcher(name: name, onChange: onChange)
        let observation = try await connection.observeOwner(of: name) { [weak watcher] owner in
            watcher?.ownerChanged(to: owner)
        }
        watcher.observationStorage.withLock { $0 = observation }
        watcher.storage.withLock { storage in
            // A change delivered while `observeOwner` returned is newer than its initial owner.
            if !storage.hasChangeSinceStart { storage.owner = observation.initialOwner }
        }
        watcher.resumeWaitersIfOwned()
        let token = connection.onDisconnect { [weak watcher] error in watcher?.finish(with: error) }
        watcher.disconnectToken.withLock { $0 = (connection, token) }
        return watcher
    }

    deinit {
        // A dropped watcher stops tracking the name on the connection.
        observationStorage.withLock { $0 }?.cancel()
        if let (connection, token) = disconnectToken.withLock({ $0 }) { connection.removeDisconnectHandler(token) }
    }

    /// The unique name that owns the name now, or `nil`.
    package var owner: String? { storage.withLock { $0.owner } }

    /// Whether somebody owns the name now.
    package var hasOwner: Bool { owner != nil }

    /// Returns the owner as soon as there is one.
    ///
    /// - Throws: `NameWatcher.WaitError.timedOut` when nobody owns the name within `timeout`, `.cancelled` when
    ///   the watcher is cancelled, or the connection's error when it closes.
    package func waitForOwner(timeout: Duration) async throws -> String {
        try await withLockedThrowingContinuation { continuation in
            enum Outcome {
                case owned(String)
                case finished
                case waiting(UInt64)
            }
            let outcome = storage.withLock { storage -> Outcome in
                if let owner = storage.owner { return .owned(owner) }
                if storage.isFinished { return .finished }
                storage.nextWaiter += 1
                storage.waiters[storage.nextWaiter] = continuation
                return .waiting(storage.nextWaiter)
            }
            let token: UInt64
            switch outcome {
            case .owned(let owner): return continuation.resume(returning: owner)
            case .finished: return continuation.resume(throwing: WaitError.cancelled(name: name))
            case .waiting(let waiter): token = waiter
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout.dispatchInterval) { [weak self] in
                guard let self else { return }
                let waiter = storage.withLock { $0.waiters.removeValue(forKey: token) }
                waiter?.resume(throwing: WaitError.timedOut(name: name, after: timeout))
            }
        }
    }

    /// Stops watching. Pending `waitForOwner` calls fail with `WaitError.cancelled`. Idempotent.
    package func cancel() {
        observationStorage.withLock { $0 }?.cancel()
        if let (connection, token) = disconnectToken.withLock({ $0 }) { connection.removeDisconnectHandler(token) }
        let waiters = storage.withLock { storage in
            storage.isFinished = true
            storage.onChange = nil
            defer { storage.waiters = [:] }
            return Array(storage.waiters.values)
        }
        for waiter in waiters { waiter.resume(throwing: WaitError.cancelled(name: name)) }
    }

    // MARK: - Internals

    private func ownerChanged(to owner: String?) {
        let (change, handler) = storage.withLock { storage -> (Change?, (@Sendable (Change) -> Void)?) in
            storage.hasChangeSinceStart = true
            guard !storage.isFinished, storage.owner != owner else { return (nil, nil) }
            let change = Change(name: name, oldOwner: storage.owner, newOwner: owner)
            storage.owner = owner
            return (change, storage.onChange)
        }
        resumeWaitersIfOwned()
        if let change, let handler { handler(change) }
    }

    private func resumeWaitersIfOwned() {
        let (owner, waiters) = storage.withLock { storage -> (String?, [LockedContinuation<String, any Error>]) in
            guard let owner = storage.owner else { return (nil, []) }
            defer { storage.waiters = [:] }
            return (owner, Array(storage.waiters.values))
        }
        guard let owner else { return }
        for waiter in waiters { waiter.resume(returning: owner) }
    }

    private func finish(with error: DBusConnectionError) {
        let (change, handler, waiters) = storage.withLock {
            storage -> (Change?, (@Sendable (Change) -> Void)?, [LockedContinuation<String, any Error>]) in
            guard !storage.isFinished else { return (nil, nil, []) }
            storage.isFinished = true
            let change = storage.owner.map { Change(name: name, oldOwner: $0, newOwner: nil) }
            storage.owner = nil
            defer { storage.waiters = [:] }
            return (change, storage.onChange, Array(storage.waiters.values))
        }
        for waiter in waiters { waiter.resume(throwing: error) }
        if let change, let handler { handler(change) }
    }
}
