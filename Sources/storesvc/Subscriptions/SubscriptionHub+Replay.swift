import ContextBusObjectGraph
import ContextBusWire
import Dispatch

extension SubscriptionHub {
    /// Runs the next replay step of `subscription` on the replay queue; `timeline` holds the transactions after
    /// the replayed ones that earlier steps read to tell to-many arrays as of a replayed transaction.
    func scheduleReplay(_ subscription: Int64, timeline: ToManyTimeline? = nil) {
        replayQueue.async { [self] in replayStep(subscription, timeline: timeline ?? ToManyTimeline(model: model)) }
    }

    /// Reads one page of history after the subscription's `processedThrough`, sends its events
    /// one by one as the connection drains, then schedules the next step; turns the subscription
    /// live when there is nothing left to replay.
    private func replayStep(_ subscription: Int64, timeline: ToManyTimeline) {
        guard
            let record = state.withLock({ state in
                state.subscriptions[subscription].flatMap { $0.phase == .replaying ? $0 : nil }
            })
        else { return }
        let page: [ChangeSet]
        do {
            page = try store.history(since: record.processedThrough, limit: replayPageSize)
        } catch {
            // Only when more than the history's retention committed while this subscription was
            // replaying: it cannot go on without a gap.
            log.warning("subscription \(subscription): replay failed: \(error); closing its connection")
            drop(subscription)
            record.connection.close(because: "subscription \(subscription) fell behind the history")
            return
        }
        guard let last = page.last else {
            let isLive = state.withLock { state in
                guard var current = state.subscriptions[subscription], current.phase == .replaying else { return true }
                guard current.processedThrough >= state.lastSeen else { return false }
                current.phase = .live
                state.subscriptions[subscription] = current
                return true
            }
            if !isLive { scheduleReplay(subscription, timeline: timeline) }
            return
        }
        var lookup = ReplayLookup(store: store)
        var events: [RPCEvent] = []
        var timeline = timeline
        for committed in page {
            let toManyChanges = toManyChanges(of: committed, for: [record.filter])
            let changes: ChangeSet
            do {
                changes = try completingToMany(committed, for: [record.filter], timeline: &timeline)
            } catch {
                log.warning("subscription \(subscription): txn \(committed.txn): \(error); closing its connection")
                drop(subscription)
                record.connection.close(
                    because: "subscription \(subscription) cannot be sent txn \(committed.txn)'s to-many arrays")
                return
            }
            lookup.reset(for: changes)
            if let event = record.filter.event(
                for: changes, subscription: subscription, lookup: { lookup.values(of: $0) },
                toManyChanges: { toManyChanges })
            {
                events.append(RPCEvent(event))
            }
        }
        let count = Int64(events.count)
        send(events, from: 0, to: record.connection) { [self, timeline] delivered in
            guard delivered else {
                drop(subscription)
                return
            }
            let isStillReplaying = state.withLock { state in
                state.eventsSent += count
                guard state.subscriptions[subscription]?.phase == .replaying else { return false }
                state.subscriptions[subscription]?.processedThrough = last.txn
                return true
            }
            if isStillReplaying { scheduleReplay(subscription, timeline: timeline) }
        }
    }

    /// Sends `events[index...]` one after the other, each once the connection has room.
    private func send(
        _ events: [RPCEvent], from index: Int, to connection: any SubscriberConnection,
        then completion: @escaping @Sendable (Bool) -> Void
    ) {
        guard index < events.count else {
            completion(true)
            return
        }
        connection.sendWhenWritable(events[index]) { [self] queued in
            guard queued else {
                completion(false)
                return
            }
            send(events, from: index + 1, to: connection, then: completion)
        }
    }

    private func drop(_ subscription: Int64) {
        state.withLock { state in
            if state.subscriptions.removeValue(forKey: subscription) != nil { state.subscribersDropped += 1 }
        }
    }
}

/// `ChangeLookup` for a replay page: the current transaction's own objects, then the store.
struct ReplayLookup {
    private var lookup: ChangeLookup?
    private let store: any PersistentStore

    init(store: any PersistentStore) {
        self.store = store
    }

    mutating func reset(for changes: ChangeSet) {
        lookup = ChangeLookup(changes: changes, store: store)
    }

    mutating func values(of id: ObjectID) -> [String: PropertyValue]? {
        lookup?.values(of: id)
    }
}
