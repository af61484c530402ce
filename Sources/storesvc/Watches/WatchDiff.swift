import ContextBusObjectGraph
import ContextBusSupport
import ContextBusWire

/// The `store.results` event that turns one ordered list of objects into another: the objects both lists hold in the
/// same relative order (the longest such run) stay; every other object of the old list is removed, every other of the
/// new one inserted (so an object that moves is removed and inserted); an object that stayed and whose version
/// changed is updated with the keys whose values differ.
enum WatchDiff {
    /// The event, or `nil` when the lists are the same objects at the same versions.
    static func event(
        watch: Int64, txn: Int64, from previous: [ObjectSnapshot], to next: [ObjectSnapshot]
    ) -> ResultsEvent? {
        var previousIndex: [ObjectID: Int] = [:]
        for (index, object) in previous.enumerated() { previousIndex[object.id] = index }
        // The objects of `next` that `previous` holds, as their old positions in new order: the longest increasing
        // run of those stays in place.
        let common = next.enumerated().compactMap { newIndex, object in
            previousIndex[object.id].map { (newIndex: newIndex, oldIndex: $0) }
        }
        let stays = Set(longestIncreasingRun(common.map(\.oldIndex)).map { common[$0].newIndex })
        var kept: Set<Int> = []  // old indexes that stay
        var inserted: [ResultsEvent.Insertion] = []
        var updated: [ResultsEvent.Update] = []
        for (newIndex, object) in next.enumerated() {
            guard stays.contains(newIndex), let oldIndex = previousIndex[object.id] else {
                inserted.append(.init(index: newIndex, object: object))
                continue
            }
            kept.insert(oldIndex)
            let old = previous[oldIndex]
            guard old.version != object.version || old.values != object.values else { continue }
            var changed: [String: JSONValue] = [:]
            for key in Set(old.values.keys).union(object.values.keys) where old.values[key] != object.values[key] {
                changed[key] = (object.values[key] ?? .null).jsonValue
            }
            updated.append(.init(index: newIndex, id: object.id, version: object.version, values: changed))
        }
        let removed = previous.indices.filter { !kept.contains($0) }.reversed()
        guard !removed.isEmpty || !inserted.isEmpty || !updated.isEmpty else { return nil }
        return ResultsEvent(watch: watch, txn: txn, removed: Array(removed), inserted: inserted, updated: updated)
    }

    /// The positions in `values` of one longest strictly increasing subsequence (patience sorting).
    static func longestIncreasingRun(_ values: [Int]) -> [Int] {
        var tails: [Int] = []  // position in `values` of the smallest tail of a run of each length
        var parent = [Int](repeating: -1, count: values.count)
        for (position, value) in values.enumerated() {
            var low = 0
            var high = tails.count
            while low < high {
                let middle = (low + high) / 2
                if values[tails[middle]] < value { low = middle + 1 } else { high = middle }
            }
            if low > 0 { parent[position] = tails[low - 1] }
            if low == tails.count { tails.append(position) } else { tails[low] = position }
        }
        var run: [Int] = []
        var position = tails.last ?? -1
        while position >= 0 {
            run.append(position)
            position = parent[position]
        }
        return run.reversed()
    }
}
