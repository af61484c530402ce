import ContextBusObjectGraph

extension SQLiteStore: ToManyFaultingStore {
    public func objectsLeavingOutToMany(with ids: [ObjectID]) throws -> StoreObjectsResult {
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

    public func fetchLeavingOutToMany(_ request: FetchRequest) throws -> StoreFetchResult {
        try fetch(request, readingToMany: false)
    }
}
