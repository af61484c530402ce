import ContextBusObjectGraph
import ContextBusWire

/// Reads that leave out to-many values (`"toMany":"faults"`, an addition to the design contract: `docs/protocol.md`,
/// `docs/decisions/tomany-faults.md`).
///
/// An `ObjectContext` over a `RemoteStore` fetches objects and fires their faults with these, so a device's
/// `readings` do not cross the wire until the context uses them; it then reads them with `objects(with:)`
/// (`store.get` with whole arrays). A service that predates the addition ignores `toMany` and sends whole
/// arrays, which contexts take as loaded members: correct either way.
extension RemoteStore: ToManyFaultingStore {
    public func objectsLeavingOutToMany(with ids: [ObjectID]) throws -> StoreObjectsResult {
        guard !ids.isEmpty else { return StoreObjectsResult(txn: lastTransaction, objects: [], missing: []) }
        let answer = try call(StoreGet.self, GetParams(ids: ids, toMany: .faults))
        noteTransaction(answer.txn)
        return answer
    }

    public func fetchLeavingOutToMany(_ request: FetchRequest) throws -> StoreFetchResult {
        let answer = try call(StoreFetch.self, FetchParams(request, toMany: .faults))
        noteTransaction(answer.txn)
        return answer
    }
}
