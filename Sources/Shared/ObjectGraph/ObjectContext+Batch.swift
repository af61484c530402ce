// MARK: - On the context's queue: batches

extension ObjectContext {
    /// Runs `request` against the store at the root of this context's chain (Core Data's `execute(_:)` of an
    /// `NSBatchUpdateRequest` or `NSBatchDeleteRequest`), then merges what it committed into this context and its
    /// children: objects it deleted leave, objects it changed take the new values (this context's unsaved changes to
    /// them win, by its `mergePolicy`).
    ///
    /// Unlike Core Data's, a batch is not invisible: every other context observing the store (and every subscriber
    /// of storesvc) merges it as any save. A store over the bus (`RemoteStore`) answers without the change set; this
    /// context then gets it from the store's change stream when it merges automatically.
    ///
    /// - Returns: The transaction (`nil` when nothing was written) and how many objects matched.
    /// - Throws: As `PersistentStore.batch(_:)`.
    @discardableResult
    public func execute(_ request: BatchRequest) throws -> BatchResult {
        let result = try rootStore.batch(request)
        if let changes = result.changes, !changes.isEmpty {
            let core = self.core
            if automaticallyMergesChanges { core.ownTransactions.insert(changes.txn) }
            core.merge(changes, mergePolicy: mergePolicy)
            childEvents.send(ParentEvent(changes: changes, idMap: [:], origin: nil))
        }
        return result
    }
}
