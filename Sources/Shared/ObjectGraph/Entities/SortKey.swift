/// A sort key of entity `Entity`: an attribute, optionally through to-one relationships, and a direction; the
/// typed form of `ObjectSortDescriptor` (Core Data's `NSSortDescriptor(keyPath:ascending:)`).
///
/// Generated types give one per attribute, ascending, and one function per to-one relationship that sorts by a
/// key of its destination:
///
/// ```swift
/// Device.fetchRequest(sortedBy: [.name, .lastSeen.descending])
/// Reading.fetchRequest(sortedBy: [.device(.name), .time.descending])
/// ```
public struct SortKey<Entity: ManagedEntity>: Sendable, Hashable {
    /// The descriptor the fetch uses.
    public var descriptor: ObjectSortDescriptor

    /// Sorts by `keyPath` (`"name"`, `"device.name"`), ascending unless told.
    public init(_ keyPath: String, ascending: Bool = true) {
        descriptor = ObjectSortDescriptor(keyPath, ascending: ascending)
    }

    /// Sorts by `key` of the object the to-one relationship `relationship` points at, in `key`'s direction.
    public init<Destination: ManagedEntity>(through relationship: String, _ key: SortKey<Destination>) {
        descriptor = key.descriptor
        descriptor.keyPath.insert(relationship, at: 0)
    }

    /// The same key, ascending.
    public var ascending: SortKey {
        var key = self
        key.descriptor.ascending = true
        return key
    }

    /// The same key, descending.
    public var descending: SortKey {
        var key = self
        key.descriptor.ascending = false
        return key
    }

    /// The key path, dotted (`device.name`).
    public var keyPath: String { descriptor.keyPath.joined(separator: ".") }
}
