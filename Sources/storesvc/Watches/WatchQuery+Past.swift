import ContextBusObjectGraph

/// A watch's list fetched at some transaction, with the history after the transaction it was wanted for: kept by
/// `WatchHub` so that the next transactions' lists, up to `txn`, are told from it without another fetch.
struct FetchedWatchList {
    /// The transaction the fetch reflects.
    let txn: Int64
    /// The request's list from its first object (no offset), `offset + limit + margin` objects of it at most.
    let objects: [ObjectSnapshot]
    /// How many objects beyond the request's window were fetched.
    let margin: Int
    /// Whether `objects` is every object that matched (no limit, or fewer than asked for).
    let isComplete: Bool
    var past: PastSnapshots
}

extension WatchQuery {
    /// The watch's list as of transaction `txn`: exactly what a `store.fetch` of the request returned after that
    /// transaction, though the store has committed others since (docs/protocol.md, "Live queries on the wire").
    ///
    /// The list is fetched now (at `L ≥ txn`, or taken from `fetched` when that reaches `txn`), with `margin` objects
    /// beyond the window. An object that no transaction after `txn` up to `L` can have moved (`objectsThatMayMove`)
    /// has the same values and place then as now; each one that may have moved is put where its values as of `txn`
    /// place it (`PastSnapshots`), or left out. A window that fetched fewer objects beyond it than may have moved is
    /// fetched again, wider: otherwise an object beyond the fetched ones could have belonged in it.
    func list(
        asOf txn: Int64, store: any PersistentStore, fetched cached: inout FetchedWatchList?
    ) throws -> [ObjectSnapshot] {
        let offset = request.fetchOffset
        let limit = request.fetchLimit
        var margin = 0
        while true {
            var fetched: FetchedWatchList
            if let reusable = cached, reusable.txn >= txn, reusable.past.start <= txn,
                reusable.isComplete || reusable.margin >= margin
            {
                fetched = reusable
            } else {
                var wide = request
                wide.fetchOffset = 0
                wide.fetchLimit = limit.map { offset + $0 + margin }
                let result = try store.fetch(wide)
                guard case .objects(let objects) = result.content else { throw StoreError.unavailable("no objects") }
                guard result.txn >= txn else {
                    throw ToManyTimelineError.readOlderThanChangeSet(read: result.txn, txn: txn)
                }
                fetched = FetchedWatchList(
                    txn: result.txn, objects: objects, margin: margin,
                    isComplete: wide.fetchLimit.map { objects.count < $0 } ?? true,
                    past: PastSnapshots(store: store, after: txn))
            }
            defer { cached = fetched }
            guard fetched.txn > txn else { return window(of: fetched.objects) }
            try fetched.past.extend(through: fetched.txn)
            let moved = try objectsThatMayMove(between: txn, and: fetched.txn, past: &fetched.past)
            if !fetched.isComplete && moved.count > fetched.margin {
                margin = moved.count
                continue
            }
            var lookupError: (any Error)?
            var past = fetched.past
            defer { fetched.past = past }
            func lookup(_ id: ObjectID) -> [String: PropertyValue]? {
                do {
                    return try past.snapshot(of: id, asOf: txn)?.values
                } catch {
                    lookupError = error
                    return nil
                }
            }
            var candidates: [(snapshot: ObjectSnapshot, sortValues: [PropertyValue])] = []
            for object in fetched.objects where !moved.contains(object.id) {
                candidates.append((object, sortValues(of: object.values, lookup: lookup)))
            }
            for snapshot in try past.snapshots(of: Array(moved), asOf: txn).values
            where matches(snapshot.values, lookup: lookup) {
                candidates.append((snapshot, sortValues(of: snapshot.values, lookup: lookup)))
            }
            if let lookupError { throw lookupError }
            candidates.sort { precedes(($0.snapshot.id, $0.sortValues), ($1.snapshot.id, $1.sortValues)) }
            return window(of: candidates.map(\.snapshot))
        }
    }

    /// The request's window (`offset`, `limit`) of a list that starts at the first object.
    private func window(of objects: [ObjectSnapshot]) -> [ObjectSnapshot] {
        Array(objects.dropFirst(request.fetchOffset).prefix(request.fetchLimit ?? Int.max))
    }
}
