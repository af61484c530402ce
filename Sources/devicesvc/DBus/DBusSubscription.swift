import Synchronization

/// A registered signal handler; `cancel()` removes it and its match rule from the bus.
///
/// Dropping the subscription does not cancel it: cancel explicitly (or close the connection).
package final class DBusSubscription: Sendable {
    /// The rule the handler receives signals for.
    package let rule: DBusMatchRule
    private let connection: DBusConnection
    private let token: UInt64
    private let isCancelled = Atomic<Bool>(false)

    package init(connection: DBusConnection, token: UInt64, rule: DBusMatchRule) {
        self.connection = connection
        self.token = token
        self.rule = rule
    }

    /// Stops delivery at once and sends `RemoveMatch`. Idempotent.
    package func cancel() {
        guard isCancelled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return }
        connection.removeSubscription(token: token)
    }
}

/// A registered owner-change handler for a well-known name; `cancel()` removes it.
final class DBusOwnerObservation: Sendable {
    /// The name observed.
    let name: String
    /// The owner when observation began (`nil`: nobody owned the name).
    let initialOwner: String?
    private let connection: DBusConnection
    private let token: UInt64
    private let isCancelled = Atomic<Bool>(false)

    init(connection: DBusConnection, name: String, token: UInt64, initialOwner: String?) {
        self.connection = connection
        self.name = name
        self.token = token
        self.initialOwner = initialOwner
    }

    /// Stops notifications at once and stops tracking the name when nobody else does. Idempotent.
    func cancel() {
        guard isCancelled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return }
        connection.removeOwnerObserver(name: name, token: token)
    }
}
