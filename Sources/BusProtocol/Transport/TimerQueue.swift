/// The pending timers of one event loop, earliest last so that firing pops from the end.
struct TimerQueue {
    struct Entry {
        var deadline: ContinuousClock.Instant
        var id: UInt64
        var work: @Sendable () -> Void

        func isEarlierOrSame(as deadline: ContinuousClock.Instant, id: UInt64) -> Bool {
            self.deadline < deadline || (self.deadline == deadline && self.id <= id)
        }
    }

    /// Sorted by (deadline, id), descending.
    private var entries: [Entry] = []

    var isEmpty: Bool { entries.isEmpty }
    var count: Int { entries.count }
    var nextDeadline: ContinuousClock.Instant? { entries.last?.deadline }

    mutating func insert(_ entry: Entry) {
        entries.insert(entry, at: position(of: entry.deadline, id: entry.id))
    }

    /// Removes a timer that has not fired; `false` when it had already fired or been removed.
    mutating func remove(deadline: ContinuousClock.Instant, id: UInt64) -> Bool {
        let index = position(of: deadline, id: id)
        guard index < entries.count, entries[index].id == id else { return false }
        entries.remove(at: index)
        return true
    }

    /// Removes and returns the work of every timer due at `now`, earliest first.
    mutating func removeExpired(at now: ContinuousClock.Instant) -> [@Sendable () -> Void] {
        var due: [@Sendable () -> Void] = []
        while let last = entries.last, last.deadline <= now {
            due.append(last.work)
            entries.removeLast()
        }
        return due
    }

    mutating func removeAll() {
        entries.removeAll()
    }

    /// The first index whose entry is not later than (deadline, id): where that entry is, or would be inserted.
    private func position(of deadline: ContinuousClock.Instant, id: UInt64) -> Int {
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
