/// Where an object sits in a `LiveQuerySnapshot`: its section and its position in the section.
public struct LiveQueryIndexPath: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var section: Int
    public var item: Int

    public init(section: Int, item: Int) {
        self.section = section
        self.item = item
    }

    public static func < (lhs: LiveQueryIndexPath, rhs: LiveQueryIndexPath) -> Bool {
        (lhs.section, lhs.item) < (rhs.section, rhs.item)
    }

    public var description: String { "[\(section), \(item)]" }
}

/// One section of a live query's result: the objects sharing one value of the section key.
public struct LiveQuerySection: Sendable, Hashable {
    /// The section key's value for every object of the section (`.null` for a query without
    /// sections, whose only section holds every object).
    public var value: PropertyValue
    /// The objects of the section, in the request's sort order.
    public var objectIDs: [ObjectID]

    public init(value: PropertyValue, objectIDs: [ObjectID]) {
        self.value = value
        self.objectIDs = objectIDs
    }

    /// The section's title: a string value as it is, `""` for `nil`, other values as printed.
    public var name: String {
        switch value {
        case .null: return ""
        case .string(let string): return string
        default: return value.description
        }
    }
}

/// A live query's result at one moment: object IDs (never objects, which belong to one queue)
/// grouped into sections, in the request's order.
public struct LiveQuerySnapshot: Sendable, Hashable {
    /// The sections in order. A query without a section key always has exactly one section.
    public var sections: [LiveQuerySection]

    public init(sections: [LiveQuerySection]) {
        self.sections = sections
    }

    /// Every object ID, section after section.
    public var objectIDs: [ObjectID] { sections.flatMap(\.objectIDs) }

    /// The number of objects.
    public var count: Int { sections.reduce(0) { $0 + $1.objectIDs.count } }

    /// The object at `path`.
    public subscript(path: LiveQueryIndexPath) -> ObjectID {
        sections[path.section].objectIDs[path.item]
    }

    /// The snapshot `diff` leads to from this one, applied the way a table view applies a batch
    /// of updates: deletes and move sources at their old positions, then deleted sections (by
    /// then empty), then inserted sections (empty), then inserts and move targets at their new
    /// positions in ascending order. `updated` changes no position.
    ///
    /// - Precondition: `diff` was computed from this snapshot.
    public func applying(_ diff: LiveQueryDiff) -> LiveQuerySnapshot {
        var sections = self.sections
        let removals = diff.deleted.map(\.path) + diff.moved.map(\.from)
        for path in removals.sorted(by: >) {
            sections[path.section].objectIDs.remove(at: path.item)
        }
        for change in diff.deletedSections.sorted(by: { $0.index > $1.index }) {
            sections.remove(at: change.index)
        }
        for change in diff.insertedSections.sorted(by: { $0.index < $1.index }) {
            sections.insert(LiveQuerySection(value: change.value, objectIDs: []), at: change.index)
        }
        let additions = diff.inserted.map { ($0.path, $0.objectID) } + diff.moved.map { ($0.to, $0.objectID) }
        for (path, id) in additions.sorted(by: { $0.0 < $1.0 }) {
            sections[path.section].objectIDs.insert(id, at: path.item)
        }
        return LiveQuerySnapshot(sections: sections)
    }
}
