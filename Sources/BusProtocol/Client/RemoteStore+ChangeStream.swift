import ContextBusObjectGraph
import ContextBusSupport
import ContextBusWire
import Dispatch
import Foundation

// The change stream: one `store.subscribe` to every entity (`"toMany":"changes"`), its `store.changed` events
// turned into `ChangeSet`s on `deliveryQueue` (`RemoteStore+EventConversion.swift`), and a new subscription with
// `since` after every reconnection.
//
// Everything that reads or moves `subscription` and `lastDeliveredTxn` runs on `deliveryQueue`, one item at a
// time: the subscribe call blocks it, so events that arrive meanwhile (queued by the loop) are handled only once
// the subscription's number is known.

extension RemoteStore {
    /// Subscribes (on the delivery queue) and starts listening; re-subscribes after every reconnection.
    func startChangeStream() async throws {
        let events = client.events(ChangedEvent.self).startWithValues { [weak self] event in
            guard let self else { return }
            deliveryQueue.async { self.receive(event) }
        }
        let hook = client.onReconnect { [weak self] _ in
            guard let self else { return }
            deliveryQueue.async { self.resubscribe() }
        }
        state.withLock { $0.disposables += [events, hook] }
        let failure = await withLockedContinuation { continuation in
            deliveryQueue.async { [self] in
                do throws(StoreError) {
                    let result = try call(StoreSubscribe.self, SubscribeParams(toMany: .changes))
                    state.withLock { state in
                        state.subscription = result.subscription
                        state.lastDeliveredTxn = result.txn
                        state.lastTransaction = max(state.lastTransaction, result.txn)
                    }
                    continuation.resume(returning: StoreError?.none)
                } catch {
                    continuation.resume(returning: error)
                }
            }
        }
        if let failure {
            close()
            throw failure
        }
    }

    /// Handles one event, on the delivery queue: converts it and delivers it, or marks the stream for a new
    /// subscription (the event will be replayed).
    private func receive(_ event: ChangedEvent) {
        let isCurrent = state.withLock { state in
            !state.isClosed && !state.needsResubscribe && event.subscription == state.subscription
                && event.txn > state.lastDeliveredTxn
        }
        guard isCurrent else { return }
        let changes: ChangeSet
        do {
            changes = try changeSet(for: event)
        } catch {
            state.withLock { $0.needsResubscribe = true }
            // A lost connection resubscribes when it is back; otherwise try again shortly.
            if client.connectionState.isConnected {
                deliveryQueue.asyncAfter(deadline: .now() + .milliseconds(200)) { [weak self] in self?.resubscribe() }
            }
            return
        }
        let observers = state.withLock { state -> [@Sendable (ChangeSet) -> Void] in
            state.lastDeliveredTxn = event.txn
            state.lastTransaction = max(state.lastTransaction, event.txn)
            return state.observers.keys.sorted().compactMap { state.observers[$0] }
        }
        for observer in observers { observer(changes) }
    }

    /// Subscribes again with `since` = the last delivered transaction, on the delivery queue.
    func resubscribe() {
        let (since, old, isClosed) = state.withLock { ($0.lastDeliveredTxn, $0.subscription, $0.isClosed) }
        guard !isClosed else { return }
        if let old, client.connectionState.isConnected {
            // The old subscription may still live (an event could not be converted): stop it first. On a new
            // connection it is gone already and this answers 404, which changes nothing.
            _ = try? call(StoreUnsubscribe.self, UnsubscribeParams(subscription: old))
        }
        do {
            let result = try call(StoreSubscribe.self, SubscribeParams(since: since, toMany: .changes))
            state.withLock { state in
                state.subscription = result.subscription
                state.needsResubscribe = false
            }
        } catch .historyUnavailable(let asked, let oldest) {
            state.withLock { state in
                state.problem =
                    "the store's history starts at transaction \(oldest); changes after \(asked) and before it were missed"
                state.lastDeliveredTxn = max(state.lastDeliveredTxn, oldest - 1)
            }
            resubscribe()
        } catch .modelChanged(let requested, let served) {
            // Events under the new model's names would be read with the old one: the stream stops here.
            state.withLock { state in
                state.needsResubscribe = true
                state.problem =
                    "the store now serves model \(served), not \(requested) that this store was opened with (its "
                    + "database was migrated): no change after transaction \(since) is delivered; open a new "
                    + "RemoteStore to use the new model"
            }
        } catch {
            // Lost again: the next reconnection subscribes. Still connected: try again shortly.
            state.withLock { $0.needsResubscribe = true }
            if client.connectionState.isConnected {
                deliveryQueue.asyncAfter(deadline: .now() + .milliseconds(200)) { [weak self] in self?.resubscribe() }
            }
        }
    }
}
