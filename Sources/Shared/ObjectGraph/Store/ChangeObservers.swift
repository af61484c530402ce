import ContextBusSupport
import Dispatch

/// The observers of a store's committed change sets, and the serial queue that delivers to them.
///
/// `publish` is called by the store in `txn` order (it may be called while the store holds its own
/// lock: it only enqueues). Delivery happens on `deliveryQueue`, with no lock held, to the
/// observers registered when the change set was published and still registered at delivery.
package final class ChangeObservers: Sendable {
    private struct Registry {
        var nextToken = 0
        var observers: [Int: @Sendable (ChangeSet) -> Void] = [:]
    }

    private let registry = Locked(Registry())
    private let deliveryQueue: DispatchQueue

    package init(label: String) {
        deliveryQueue = DispatchQueue(label: label)
    }

    /// Registers `observer`; cancelling the returned observation unregisters it.
    package func add(_ observer: @escaping @Sendable (ChangeSet) -> Void) -> StoreObservation {
        let token = registry.withLock { registry in
            registry.nextToken += 1
            registry.observers[registry.nextToken] = observer
            return registry.nextToken
        }
        return StoreObservation { [weak self] in
            _ = self?.registry.withLock { $0.observers.removeValue(forKey: token) }
        }
    }

    /// Queues `changes` (in `txn` order) for delivery to the current observers.
    package func publish(_ changes: [ChangeSet]) {
        guard !changes.isEmpty else { return }
        let tokens = registry.withLock { Array($0.observers.keys).sorted() }
        guard !tokens.isEmpty else { return }
        deliveryQueue.async { [self] in
            for change in changes {
                for token in tokens {
                    guard let observer = registry.withLock({ $0.observers[token] }) else { continue }
                    observer(change)
                }
            }
        }
    }

    /// Waits until every change set published so far has been delivered.
    package func waitForDelivery() {
        deliveryQueue.sync {}
    }
}
