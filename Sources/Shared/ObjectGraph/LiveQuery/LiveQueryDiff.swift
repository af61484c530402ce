/// How a live query's result changed between two snapshots, in the terms of
/// `NSFetchedResultsControllerDelegate` (and of a table view's batch updates).
///
/// - `deletedSections` (old indices) and `insertedSections` (new indices). Sections never move:
///   the section key is the first sort key, so sections keep their relative order. A deleted
///   section's objects are still listed one by one in `deleted` / `moved`; an inserted section
///   is inserted empty and filled by `inserted` / `moved`.
/// - `deleted`: objects that left the result, at their old positions.
/// - `inserted`: objects that entered it, at their new positions.
/// - `moved`: objects whose position changed other than by the inserts and deletes around them
///   (including every object that changed section), old → new position. A moved object may also
///   have changed values: re-read it.
/// - `updated`: objects that stayed in place and whose values (attributes and relationships)
///   differ from the previous update's, at their new positions. A change seen only through a
///   relationship (a reading sorted by its device's name, the device renamed) is not an update
///   of the reading, though it may move it.
public struct LiveQueryDiff: Sendable, Hashable {
    /// A section that appeared or disappeared.
    public struct SectionChange: Sendable, Hashable {
        public var index: Int
        public var value: PropertyValue
        public init(index: Int, value: PropertyValue) {
            self.index = index
            self.value = value
        }
    }

    /// An object that entered, left or changed in place.
    public struct ItemChange: Sendable, Hashable {
        public var path: LiveQueryIndexPath
        public var objectID: ObjectID
        public init(path: LiveQueryIndexPath, objectID: ObjectID) {
            self.path = path
            self.objectID = objectID
        }
    }

    /// An object that changed position.
    public struct Move: Sendable, Hashable {
        public var from: LiveQueryIndexPath
        public var to: LiveQueryIndexPath
        public var objectID: ObjectID
        public init(from: LiveQueryIndexPath, to: LiveQueryIndexPath, objectID: ObjectID) {
            self.from = from
            self.to = to
            self.objectID = objectID
        }
    }

    public var deletedSections: [SectionChange] = []
    public var insertedSections: [SectionChange] = []
    public var deleted: [ItemChange] = []
    public var inserted: [ItemChange] = []
    public var moved: [Move] = []
    public var updated: [ItemChange] = []

    public init() {}

    /// Whether nothing changed.
    public var isEmpty: Bool {
        deletedSections.isEmpty && insertedSections.isEmpty && deleted.isEmpty && inserted.isEmpty
            && moved.isEmpty && updated.isEmpty
    }
}

extension LiveQueryDiff {
    /// The changes from `old` to `new`; objects for which `hasChanged` is true and that keep
    /// their place are `updated`.
    ///
    /// The stable objects are the longest run of common objects, in the same section, whose
    /// relative order is unchanged; every other common object is moved. Applying the result to
    /// `old` gives `new` (`LiveQuerySnapshot.applying(_:)`).
    static func between(
        _ old: LiveQuerySnapshot, _ new: LiveQuerySnapshot, hasChanged: (ObjectID) -> Bool
    ) -> LiveQueryDiff {
        var diff = LiveQueryDiff()
        let oldValues = Set(old.sections.map(\.value))
        let newValues = Set(new.sections.map(\.value))
        for (index, section) in old.sections.enumerated() where !newValues.contains(section.value) {
            diff.deletedSections.append(SectionChange(index: index, value: section.value))
        }
        for (index, section) in new.sections.enumerated() where !oldValues.contains(section.value) {
            diff.insertedSections.append(SectionChange(index: index, value: section.value))
        }

        let oldPlaces = Place.index(old)
        let newPlaces = Place.index(new)
        for section in old.sections.indices {
            for (item, id) in old.sections[section].objectIDs.enumerated() where newPlaces[id] == nil {
                diff.deleted.append(ItemChange(path: LiveQueryIndexPath(section: section, item: item), objectID: id))
            }
        }
        // Common objects in the new order; candidates for staying put keep their section.
        var common: [(id: ObjectID, old: Place, new: Place)] = []
        for section in new.sections.indices {
            for (item, id) in new.sections[section].objectIDs.enumerated() {
                let path = LiveQueryIndexPath(section: section, item: item)
                guard let before = oldPlaces[id] else {
                    diff.inserted.append(ItemChange(path: path, objectID: id))
                    continue
                }
                common.append((id, before, newPlaces[id]!))
            }
        }
        let candidates = common.indices.filter {
            old.sections[common[$0].old.path.section].value == new.sections[common[$0].new.path.section].value
        }
        let stable = Set(longestIncreasingRun(candidates.map { common[$0].old.rank }).map { candidates[$0] })
        for (index, entry) in common.enumerated() {
            if stable.contains(index) {
                if hasChanged(entry.id) { diff.updated.append(ItemChange(path: entry.new.path, objectID: entry.id)) }
            } else {
                diff.moved.append(Move(from: entry.old.path, to: entry.new.path, objectID: entry.id))
            }
        }
        return diff
    }

    /// An object's position: its path and its rank in the whole snapshot.
    private struct Place {
        var path: LiveQueryIndexPath
        var rank: Int

        static func index(_ snapshot: LiveQuerySnapshot) -> [ObjectID: Place] {
            var places: [ObjectID: Place] = [:]
            places.reserveCapacity(snapshot.count)
            var rank = 0
            for (section, content) in snapshot.sections.enumerated() {
                for (item, id) in content.objectIDs.enumerated() {
                    places[id] = Place(path: LiveQueryIndexPath(section: section, item: item), rank: rank)
                    rank += 1
                }
            }
            return places
        }
    }

    /// Indices (into `values`) of a longest strictly increasing subsequence (patience sorting,
    /// O(n log n)).
    static func longestIncreasingRun(_ values: [Int]) -> [Int] {
        var tails: [Int] = []  // indices into values: the smallest tail of each run length
        var previous = [Int](repeating: -1, count: values.count)
        for (index, value) in values.enumerated() {
            var low = 0
            var high = tails.count
            while low < high {
                let middle = (low + high) / 2
                if values[tails[middle]] < value { low = middle + 1 } else { high = middle }
            }
            if low > 0 { previous[index] = tails[low - 1] }
            if low == tails.count { tails.append(index) } else { tails[low] = index }
        }
        var run: [Int] = []
        var cursor = tails.last ?? -1
        while cursor >= 0 {
            run.append(cursor)
            cursor = previous[cursor]
        }
        return run.reversed()
    }
}
