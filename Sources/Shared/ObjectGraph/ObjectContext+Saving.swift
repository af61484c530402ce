// MARK: - On the context's queue: saving and merging

extension ObjectContext {
    /// Saves the context's changes: into the parent (in memory) for a child context, into the
    /// store for a top-level one.
    ///
    /// Validation runs first (attribute types, required attributes, `deny` delete rules): a save
    /// that fails it changes nothing. A top-level save sends one `SaveRequest` (inserts with their
    /// temporary or reserved IDs; updates with the version and original values of their changed
    /// keys; deletes with their versions; this context's `mergePolicy`, `durability` and `name`
    /// as author), then gives objects their permanent IDs, new versions and the values the store
    /// kept. A child save makes its changes the parent's own unsaved changes; objects keep their
    /// temporary IDs until the top-level context saves. Every save is published on `didSave`.
    ///
    /// - Throws: `StoreError.validation` (nothing changes); from a store `StoreError.conflict`
    ///   (policy `error`: the context keeps its changes), `.notFound`, or a storage error.
    public func save() throws {
        let core = self.core
        guard !core.changed.isEmpty else { return }
        core.adoptPermanentIDsFromAncestors()
        let failures = core.validationFailures()
        guard failures.isEmpty else { throw StoreError.validation(failures) }
        let batch = core.saveBatch()

        switch core.source {
        case .store(let store):
            let policy = mergePolicy
            let request = core.makeSaveRequest(for: batch, mergePolicy: policy, durability: durability, author: name)
            guard !request.isEmpty else {
                let none = ChangeSet(
                    txn: store.lastTransaction, time: .init(), author: name, inserted: [], updated: [], deleted: [])
                core.apply(
                    SaveResult(txn: none.txn, ids: [:], versions: [:], changes: none), changes: none, of: batch,
                    mergePolicy: policy)
                return
            }
            let result = try store.save(request)
            let changes =
                result.changes
                ?? ChangeSet(txn: result.txn, time: .init(), author: name, inserted: [], updated: [], deleted: [])
            let committed = !changes.isEmpty
            if committed && automaticallyMergesChanges { core.ownTransactions.insert(result.txn) }
            core.apply(result, changes: changes, of: batch, mergePolicy: policy)
            if committed { saves.send(changes) }
            childEvents.send(ParentEvent(changes: changes, idMap: result.ids, origin: nil))

        case .parent(let parent):
            let push = core.makeChildPush(for: batch)
            let changes = core.changeSet(for: batch, author: name)
            let origin = ObjectIdentifier(self)
            try parent.performAndWait {
                try parent.core.apply(push)
                parent.childEvents.send(ParentEvent(changes: changes, idMap: [:], origin: origin))
            }
            core.completeChildSave(of: batch)
            if !changes.isEmpty { saves.send(changes) }
        }
    }

    /// Merges a change set saved elsewhere (Core Data's `mergeChanges(fromContextDidSave:)`).
    ///
    /// Registered objects take the new values and versions; the context's own unsaved changes
    /// stay on top of them (under `mergePolicy` `storeTrump` the saved values win for the keys
    /// the change set changed; under `rollback` the object's changes are dropped). Deleted
    /// objects leave the context. Faults load the new values when touched. The change set is
    /// passed on to child contexts that merge automatically.
    public func merge(_ changes: ChangeSet) {
        core.merge(changes, mergePolicy: mergePolicy)
        childEvents.send(ParentEvent(changes: changes, idMap: [:], origin: nil))
    }

    /// Calls `observer` with the change set of every save of this context, on the context's
    /// queue, after the context is up to date. The `didSave` signal is built on this.
    public func observeSaves(_ observer: @escaping @Sendable (ChangeSet) -> Void) -> StoreObservation {
        saves.add(observer)
    }
}

// MARK: - Automatic merging (any thread)

extension ObjectContext {
    /// Whether the context merges changes saved elsewhere by itself, on its queue: for a
    /// top-level context every change set the store commits (`observeChanges`); for a child,
    /// every save of its parent, every save of a sibling into the parent and every change set
    /// the parent merges.
    public var automaticallyMergesChanges: Bool {
        get { settings.withLock { $0.automaticallyMergesChanges } }
        set {
            let observation = newValue ? makeMergeObservation() : nil
            let previous = settings.withLock { settings in
                let previous = settings.observation
                settings.automaticallyMergesChanges = newValue
                settings.observation = observation
                return previous
            }
            previous?.cancel()
        }
    }

    private func makeMergeObservation() -> StoreObservation {
        if let parent {
            let me = ObjectIdentifier(self)
            return parent.childEvents.add { [weak self] event in
                guard event.origin != me, let self else { return }
                self.perform { self.receive(event) }
            }
        }
        return rootStore.observeChanges { [weak self] changes in
            guard let self else { return }
            self.perform { self.receiveCommitted(changes) }
        }
    }

    private func receive(_ event: ParentEvent) {
        let core = self.core
        core.rekey(core.relevantPart(of: event.idMap))
        core.merge(event.changes, mergePolicy: mergePolicy)
        childEvents.send(ParentEvent(changes: event.changes, idMap: event.idMap, origin: nil))
    }

    private func receiveCommitted(_ changes: ChangeSet) {
        let core = self.core
        if core.ownTransactions.remove(changes.txn) != nil { return }
        core.merge(changes, mergePolicy: mergePolicy)
        childEvents.send(ParentEvent(changes: changes, idMap: [:], origin: nil))
    }
}
