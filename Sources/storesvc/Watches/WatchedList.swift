import ContextBusObjectGraph
import ContextBusSupport
import ContextBusWire

/// A watch's ordered list kept in memory, edited by each change set in place: a change of k objects costs k binary
/// searches and k moves in the array, not a sort of the whole list (docs/protocol.md, "Live queries on the wire").
///
/// Its order is the fetch's: the sort keys (own attributes only), each by `PropertyValue.storageOrder` (`nil`
/// first when ascending), then the object ID; the list is a total order, so every object has one place.
///
/// A list with a `limit` (the first N of the order) is a window: while it is not full it holds every object that
/// matches, and once full, every object it does not hold sorts after its last. A change set keeps that true when
/// it only adds objects before the last of a full window, or changes objects in their places; one that takes an
/// object out of a full window, or moves one to its end, needs the objects beyond it, which only a fetch has
/// (`apply` then answers `nil`).
struct WatchedList {
    /// The list, in order.
    private(set) var objects: [ObjectSnapshot]
    /// Each listed object's snapshot, by ID (what finds an object whose values have since changed).
    private var members: [ObjectID: ObjectSnapshot]
    private let sortKeys: [(key: String, ascending: Bool)]
    /// Whether the list given was in this type's order (a fetched list is, unless the store orders values
    /// otherwise; a watch whose list was not is fetched again instead of edited). Edits keep the order.
    private(set) var isInOrder: Bool

    /// At most this many objects (`store.watch`'s `limit`).
    let limit: Int?

    /// The list `objects`, which is in the order of `sortDescriptors` (each a key path of one attribute), and holds
    /// the first `limit` objects of that order.
    init(objects: [ObjectSnapshot], sortDescriptors: [ObjectSortDescriptor], limit: Int? = nil) {
        self.objects = objects
        self.limit = limit
        members = Dictionary(objects.map { ($0.id, $0) }, uniquingKeysWith: { _, last in last })
        sortKeys = sortDescriptors.map { ($0.keyPath[0], $0.ascending) }
        isInOrder = true
        isInOrder = zip(objects, objects.dropFirst()).allSatisfy { precedes($0, $1) }
    }

    /// The listed snapshot of `id`, if the list holds it.
    func member(_ id: ObjectID) -> ObjectSnapshot? { members[id] }

    /// The parts of one `store.results` event.
    struct Edit: Equatable {
        /// Indexes into the list before, highest first.
        var removed: [Int] = []
        /// Indexes into the list after, lowest first.
        var inserted: [ResultsEvent.Insertion] = []
        /// Indexes into the list after.
        var updated: [ResultsEvent.Update] = []

        var isEmpty: Bool { removed.isEmpty && inserted.isEmpty && updated.isEmpty }
    }

    /// Applies what one transaction did to the entity's objects: for each object it touched, its snapshot after
    /// the transaction when it belongs in the list, `nil` when it does not (deleted, or no longer matching).
    /// An object that stays in its place and changed is updated; one whose sort values changed is removed and
    /// inserted.
    ///
    /// - Returns: The event's parts (empty when the list is as it was), or `nil`, the list unchanged, when the
    ///   change set cannot decide a full window (see the type's notes).
    mutating func apply(_ changes: [(id: ObjectID, snapshot: ObjectSnapshot?)]) -> Edit? {
        if let limit, objects.count >= limit, let last = objects.last {
            for (id, snapshot) in changes {
                let old = members[id]
                if let old, snapshot.map({ hasSamePlace(old, $0) }) != true { return nil }
                if let snapshot, old == nil, !precedes(snapshot, last) { return nil }
            }
        }
        let previous = limit == nil ? [] : objects
        var edit = Edit()
        var insertions: [ObjectSnapshot] = []
        var updates: [(old: ObjectSnapshot, new: ObjectSnapshot)] = []
        var removals: [Int] = []
        for (id, snapshot) in changes {
            let old = members[id]
            switch (old, snapshot) {
            case (nil, nil):
                continue
            case (nil, let new?):
                insertions.append(new)
            case (let old?, nil):
                removals.append(index(of: old))
                members[id] = nil
            case (let old?, let new?):
                if hasSamePlace(old, new) {
                    if old.version != new.version || old.values != new.values { updates.append((old, new)) }
                } else {
                    removals.append(index(of: old))
                    insertions.append(new)
                }
            }
        }
        removals.sort(by: >)
        for index in removals { objects.remove(at: index) }
        edit.removed = removals
        for new in insertions {
            objects.insert(new, at: insertionIndex(of: new))
            members[new.id] = new
        }
        edit.inserted = insertions.map { ResultsEvent.Insertion(index: index(of: $0), object: $0) }
            .sorted { $0.index < $1.index }
        for (old, new) in updates {
            let position = index(of: old)
            objects[position] = new
            members[new.id] = new
            var changed: [String: JSONValue] = [:]
            for key in Set(old.values.keys).union(new.values.keys) where old.values[key] != new.values[key] {
                changed[key] = (new.values[key] ?? .null).jsonValue
            }
            edit.updated.append(.init(index: position, id: new.id, version: new.version, values: changed))
        }
        if let limit, objects.count > limit {
            for dropped in objects[limit...] { members[dropped.id] = nil }
            objects.removeLast(objects.count - limit)
            // Some of the insertions or updates fell off the end: the event is the lists' difference (a window is
            // short; the whole lists are not).
            guard let event = WatchDiff.event(watch: 0, txn: 0, from: previous, to: objects) else { return Edit() }
            return Edit(removed: event.removed, inserted: event.inserted, updated: event.updated)
        }
        return edit
    }

    /// Whether `new` sorts where `old` did (the same values of every sort key).
    private func hasSamePlace(_ old: ObjectSnapshot, _ new: ObjectSnapshot) -> Bool {
        sortKeys.allSatisfy { key, _ in
            PropertyValue.storageOrder(old.values[key] ?? .null, new.values[key] ?? .null) == 0
        }
    }

    /// The index of a listed object, found by its snapshot's sort values (by its ID if it is not there).
    private func index(of snapshot: ObjectSnapshot) -> Int {
        let position = insertionIndex(of: snapshot)
        if position < objects.count && objects[position].id == snapshot.id { return position }
        return objects.firstIndex { $0.id == snapshot.id } ?? position
    }

    /// The first index whose object does not sort before `snapshot`.
    private func insertionIndex(of snapshot: ObjectSnapshot) -> Int {
        var low = 0
        var high = objects.count
        while low < high {
            let middle = (low + high) / 2
            if precedes(objects[middle], snapshot) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The list's order: the sort keys, then the object ID.
    func precedes(_ lhs: ObjectSnapshot, _ rhs: ObjectSnapshot) -> Bool {
        for (key, ascending) in sortKeys {
            let order = PropertyValue.storageOrder(lhs.values[key] ?? .null, rhs.values[key] ?? .null)
            if order != 0 { return ascending ? order < 0 : order > 0 }
        }
        return lhs.id < rhs.id
    }
}
