/// Pending one-shot timers, earliest last so that firing pops from the end: an event loop's
/// (`ContinuousClock.Instant` deadlines) or `DispatchDeadlines`' (`DispatchTime`). Timers due at the same
/// deadline fire in the order of their ids.
public struct TimerQueue<Deadline: Comparable & Sendable>: Sendable {
    public struct Entry: Sendable {
        public var deadline: Deadline
        public var id: UInt64
        public var work: @Sendable () -> Void

        public init(deadline: Deadline, id: UInt64, work: @escaping @Sendable () -> Void) {
            self.deadline = deadline
            self.id = id
            self.work = work
        }

        func isEarlierOrSame(as deadline: Deadline, id: UInt64) -> Bool {
            self.deadline < deadline || (self.deadline == deadline && self.id <= id)
        }
    }

    /// Sorted by (deadline, id), descending.
    private var entries: [Entry] = []

    public init() {}

    public var isEmpty: Bool { entries.isEmpty }
    public var count: Int { entries.count }
    public var nextDeadline: Deadline? { entries.last?.deadline }

    public mutating func insert(_ entry: Entry) {
        entries.insert(entry, at: position(of: entry.deadline, id: entry.id))
    }

    /// Removes a timer that has not fired; `false` when it had already fired or been removed.
    public mutating func remove(deadline: Deadline, id: UInt64) -> Bool {
        let index = position(of: deadline, id: id)
        guard index < entries.count, entries[index].id == id else { return false }
        entries.remove(at: index)
        return true
    }

    /// Removes and returns the work of every timer due at `now`, earliest first.
    public mutating func removeExpired(at now: Deadline) -> [@Sendable () -> Void] {
        var due: [@Sendable () -> Void] = []
        while let last = entries.last, last.deadline <= now {
            due.append(last.work)
            entries.removeLast()
        }
        return due
    }

    public mutating func removeAll() {
        entries.removeAll()
    }

    /// The first index whose entry is not later than (deadline, id): where that entry is, or would be inserted.
    private func position(of deadline: Deadline, id: UInt64) -> Int {
        var low = 0
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].isEarlierOrSame(as: deadline, id: id) {
                high = middle
            } else {
                low = middle + 1
            }
        }
        return low
    }
}
