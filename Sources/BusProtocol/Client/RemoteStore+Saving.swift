import ContextBusObjectGraph
import ContextBusWire
import Foundation

// `save`: one `store.save`, then the committed state of what it wrote, so that the saving context gets the
// same `SaveResult` (permanent IDs, versions, full change set) as from a local store.

extension RemoteStore {
    /// Sends `request` as one `store.save` (its temporary IDs' references as `ref`s) and waits for the commit.
    ///
    /// The change set is worked out from the request and the answer when they determine it
    /// (`changesWithoutReadBack`: no conflict, no deletes, one-to-many relationships only). Otherwise it
    /// is rebuilt from the service's answer: the objects the transaction wrote are read back with
    /// `store.get` (one round trip), and when the request deletes anything, `store.history` tells which objects
    /// the transaction deleted (cascades included). When that read-back fails (the connection was lost right
    /// after the commit), the save still succeeds, with an empty change set: the saved objects become faults.
    /// Blocks the calling thread: see the type's notes on threads.
    ///
    /// - Throws: `StoreError.conflict` with the service's per-object details (policy `error`), `.notFound`,
    ///   `.validation` (inserts named by their temporary IDs), `.invalidRequest` naming the field,
    ///   `.unavailable`.
    public func save(_ request: SaveRequest) throws -> ContextBusObjectGraph.SaveResult {
        guard !request.isEmpty else {
            let txn = lastTransaction
            return ContextBusObjectGraph.SaveResult(
                txn: txn, ids: [:], versions: [:],
                changes: ChangeSet(
                    txn: txn, time: Date(), author: request.author, inserted: [], updated: [], deleted: []))
        }
        let params: SaveParams
        do {
            params = try SaveParams(request)
        } catch {
            throw storeError(for: error)
        }
        let answer: ContextBusWire.SaveResult
        do {
            answer = try call(StoreSave.self, params)
        } catch {
            throw withInsertEntities(error, request: request)
        }
        noteTransaction(answer.txn)
        var ids: [ObjectID: ObjectID] = [:]
        for insert in request.inserts {
            if let ref = insert.id.temporaryReference, let permanent = answer.ids[ref] { ids[insert.id] = permanent }
        }
        // The save is committed: a failure to read it back must not make the caller save it again. Without the
        // snapshots the context keeps its saved objects as faults, which load when touched.
        let changes =
            changesWithoutReadBack(of: request, answer: answer, permanentIDs: ids)
            ?? (try? committedChanges(of: request, answer: answer, insertedIDs: Set(ids.values)))
            ?? ChangeSet(txn: answer.txn, time: Date(), author: request.author, inserted: [], updated: [], deleted: [])
        return ContextBusObjectGraph.SaveResult(txn: answer.txn, ids: ids, versions: answer.versions, changes: changes)
    }

    /// The change set of a committed save: snapshots of every object it wrote, and what it deleted.
    private func committedChanges(
        of request: SaveRequest, answer: ContextBusWire.SaveResult, insertedIDs: Set<ObjectID>
    ) throws -> ChangeSet {
        var time = Date()
        var deleted: [ObjectSnapshot] = []
        if !request.deletes.isEmpty {
            let versions = Dictionary(
                request.deletes.map { ($0.id, $0.version ?? 0) }, uniquingKeysWith: { first, _ in first })
            let transaction = try call(StoreHistory.self, HistoryParams(since: answer.txn - 1, limit: 1))
                .transactions.first { $0.txn == answer.txn }
            if let transaction {
                time = transaction.time
                deleted = transaction.deleted.map {
                    ObjectSnapshot(id: $0, version: versions[$0] ?? 0, values: [:])
                }
            }
        }
        let written = answer.versions.keys.sorted()
        guard !written.isEmpty else {
            return ChangeSet(
                txn: answer.txn, time: time, author: request.author, inserted: [], updated: [], deleted: deleted)
        }
        // Objects deleted by a later transaction are `missing`: that transaction's change set removes them.
        let current = try objects(with: written).objects
        let updates = Dictionary(request.updates.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var inserted: [ObjectSnapshot] = []
        var updated: [ChangeSet.Update] = []
        for snapshot in current {
            if insertedIDs.contains(snapshot.id) {
                inserted.append(snapshot)
            } else if let update = updates[snapshot.id] {
                updated.append(
                    ChangeSet.Update(
                        snapshot: snapshot, changedKeys: Set(update.values.keys), previousValues: update.original))
            } else {
                updated.append(
                    ChangeSet.Update(
                        snapshot: snapshot, changedKeys: inverseKeys(of: snapshot.id, changedBy: request),
                        previousValues: [:]))
            }
        }
        return ChangeSet(
            txn: answer.txn, time: time, author: request.author, inserted: inserted, updated: updated,
            deleted: deleted)
    }

    /// The relationships of `id`'s entity whose inverse the request set on some object: the keys an object
    /// changed only as the other side of a relationship has changed.
    func inverseKeys(of id: ObjectID, changedBy request: SaveRequest) -> Set<String> {
        guard let entity = model.entity(named: id.entity) else { return [] }
        var touched: Set<String> = []  // "Entity.key" set by the request
        for insert in request.inserts { for key in insert.values.keys { touched.insert("\(insert.id.entity).\(key)") } }
        for update in request.updates { for key in update.values.keys { touched.insert("\(update.id.entity).\(key)") } }
        var keys: Set<String> = []
        for relationship in entity.relationships {
            if touched.contains("\(relationship.destination).\(relationship.inverse)")
                || request.deletes.contains(where: { $0.id.entity == relationship.destination })
            {
                keys.insert(relationship.name)
            }
        }
        return keys
    }

    /// A validation error names inserts by `ref` only; gives them back the temporary IDs of the request.
    private func withInsertEntities(_ error: StoreError, request: SaveRequest) -> StoreError {
        guard case .validation(let failures) = error else { return error }
        let byRef = Dictionary(
            request.inserts.compactMap { insert in insert.id.temporaryReference.map { ($0, insert.id) } },
            uniquingKeysWith: { first, _ in first })
        return .validation(
            failures.map { failure in
                var failure = failure
                if let id = failure.id, id.entity.isEmpty, let ref = id.temporaryReference, let insert = byRef[ref] {
                    failure.id = insert
                }
                return failure
            })
    }
}
