/// The bookkeeping of a `ChainQueue`, kept under its mutex: lanes (one per key, or one for all in global mode)
/// of waiting chains in arrival order, and which lanes are running.
struct ChainQueueState<Key: Hashable & Sendable> {
    typealias Ticket = UInt64
    /// `nil` is the single lane of global mode.
    typealias Lane = Key?

    private struct Waiting {
        let ticket: Ticket
        let key: Key
        let start: @Sendable () -> Void
    }

    private var waiting: [Lane: RingBuffer<Waiting>] = [:]
    /// The lane of each waiting chain, by ticket (so that cancelling a started chain costs nothing).
    private var waitingLanes: [Ticket: Lane] = [:]
    /// The key of each running chain, by ticket.
    private var running: [Ticket: (lane: Lane, key: Key)] = [:]
    private var busyLanes: Set<Lane> = []
    private var nextTicket: Ticket = 0

    var runningKeys: Set<Key> { Set(running.values.map(\.key)) }

    var waitingCounts: [Key: Int] {
        var counts: [Key: Int] = [:]
        for lane in waiting.values {
            var copy = lane
            while let entry = copy.popFirst() { counts[entry.key, default: 0] += 1 }
        }
        return counts
    }

    /// Puts a chain at the end of its lane; returns its ticket.
    mutating func enqueue(lane: Lane, key: Key, start: @escaping @Sendable (Ticket) -> Void) -> Ticket {
        let ticket = nextTicket
        nextTicket += 1
        waiting[lane, default: RingBuffer()].append(Waiting(ticket: ticket, key: key, start: { start(ticket) }))
        waitingLanes[ticket] = lane
        return ticket
    }

    /// Removes a chain that has not started; returns false if it already started (or finished).
    mutating func cancelWaiting(_ ticket: Ticket) -> Bool {
        guard let lane = waitingLanes.removeValue(forKey: ticket) else { return false }
        _ = waiting[lane]?.removeFirst(where: { $0.ticket == ticket })
        if waiting[lane]?.isEmpty == true { waiting[lane] = nil }
        return true
    }

    /// Marks a running chain finished, freeing its lane and slot.
    mutating func finish(_ ticket: Ticket) {
        guard let (lane, _) = running.removeValue(forKey: ticket) else { return }
        busyLanes.remove(lane)
    }

    /// If a slot is free, takes the earliest waiting chain whose lane is free, marks it running and returns
    /// its start action (to be called outside the lock).
    mutating func nextStart(maxConcurrent: Int) -> (@Sendable () -> Void)? {
        guard running.count < maxConcurrent else { return nil }
        var best: (lane: Lane, ticket: Ticket)?
        for (lane, entries) in waiting where !busyLanes.contains(lane) {
            guard let head = entries.first else { continue }
            if best == nil || head.ticket < best!.ticket { best = (lane, head.ticket) }
        }
        // `lane` is itself optional (nil is the global lane), so unwrap `best` rather than `best?.lane`.
        guard let best, let next = waiting[best.lane]?.popFirst() else { return nil }
        let lane = best.lane
        if waiting[lane]?.isEmpty == true { waiting[lane] = nil }
        waitingLanes[next.ticket] = nil
        busyLanes.insert(lane)
        running[next.ticket] = (lane, next.key)
        return next.start
    }
}
