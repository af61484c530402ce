/// A store that can answer `objects(with:)` without reading to-many relationships, so that a
/// context can fire an object's fault without reading, say, every reading of a device; the
/// context then reads a to-many relationship's members only when it is used.
///
/// `SQLiteStore` and `InMemoryStore` adopt it; other stores (`RemoteStore`) answer contexts
/// with whole snapshots, which is equally correct.
protocol ToManyFaultingStore: PersistentStore {
    /// `objects(with:)`, with the to-many values left out of every snapshot.
    func objectsLeavingOutToMany(with ids: [ObjectID]) throws -> StoreObjectsResult
}

extension SQLiteStore: ToManyFaultingStore {
    func objectsLeavingOutToMany(with ids: [ObjectID]) throws -> StoreObjectsResult {
        try readers.read { connection, txn in
            var result = StoreObjectsResult(txn: txn, objects: [], missing: [])
            for id in ids {
                if let number = id.number, let table = tables[id.entity],
                    let snapshot = try table.rowSnapshot(number: number, on: connection)
                {
                    result.objects.append(snapshot)
                } else {
                    result.missing.append(id)
                }
            }
            return result
        }
    }
}

extension InMemoryStore: ToManyFaultingStore {
    func objectsLeavingOutToMany(with ids: [ObjectID]) throws -> StoreObjectsResult {
        var result = try objects(with: ids)
        for index in result.objects.indices {
            guard let entity = model.entity(named: result.objects[index].id.entity) else { continue }
            for relationship in entity.relationships where relationship.isToMany {
                result.objects[index].values.removeValue(forKey: relationship.name)
            }
        }
        return result
    }
}
