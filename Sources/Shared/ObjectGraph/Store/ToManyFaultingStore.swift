/// A store that can answer reads without reading to-many relationships, so that a context can fire an
/// object's fault, or fetch objects, without reading, say, every reading of a device; the context then
/// reads a to-many relationship's members only when it is used (`objects(with:)`).
///
/// `SQLiteStore`, `InMemoryStore` and `RemoteStore` (`"toMany":"faults"` over the wire) adopt it; other
/// stores answer contexts with whole snapshots, which is equally correct.
public protocol ToManyFaultingStore: PersistentStore {
    /// `objects(with:)`, with the to-many values left out of every snapshot.
    func objectsLeavingOutToMany(with ids: [ObjectID]) throws -> StoreObjectsResult

    /// `fetch(_:)`, with the to-many values left out of every snapshot of an `objects` result (`ids` and
    /// `count` results are the same as `fetch(_:)`'s).
    func fetchLeavingOutToMany(_ request: FetchRequest) throws -> StoreFetchResult
}

extension InMemoryStore: ToManyFaultingStore {
    public func objectsLeavingOutToMany(with ids: [ObjectID]) throws -> StoreObjectsResult {
        var result = try objects(with: ids)
        result.objects = result.objects.map(model.leavingOutToMany)
        return result
    }

    public func fetchLeavingOutToMany(_ request: FetchRequest) throws -> StoreFetchResult {
        var result = try fetch(request)
        if case .objects(let snapshots) = result.content {
            result.content = .objects(snapshots.map(model.leavingOutToMany))
        }
        return result
    }
}

extension Model {
    /// `snapshot` without the values of its entity's to-many relationships.
    func leavingOutToMany(_ snapshot: ObjectSnapshot) -> ObjectSnapshot {
        guard let entity = entity(named: snapshot.id.entity) else { return snapshot }
        var snapshot = snapshot
        for relationship in entity.relationships where relationship.isToMany {
            snapshot.values.removeValue(forKey: relationship.name)
        }
        return snapshot
    }
}
