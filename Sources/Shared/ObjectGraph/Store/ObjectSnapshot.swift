/// The committed values of one object at one version.
///
/// `values` holds every attribute and relationship (to-one as `.reference` or `.null`,
/// to-many as `.references`, sorted by ID).
public struct ObjectSnapshot: Sendable, Hashable {
    public var id: ObjectID
    public var version: Int64
    public var values: [String: PropertyValue]

    public init(id: ObjectID, version: Int64, values: [String: PropertyValue]) {
        self.id = id
        self.version = version
        self.values = values
    }
}
