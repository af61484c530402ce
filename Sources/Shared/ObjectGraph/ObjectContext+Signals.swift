import ContextBusReactive

extension ObjectContext {
    /// The change set of every save of this context, as a hot stream: a started signal sends
    /// the saves that happen while it is started, on the context's queue, after the context is
    /// up to date (`NSManagedObjectContextDidSaveNotification`). It never terminates by itself;
    /// dispose of the start to stop observing.
    ///
    /// A top-level save sends the committed change set of the store; a save into a parent sends
    /// one with `txn` 0 (nothing was committed to a store yet) and temporary IDs for new objects.
    ///
    /// ```swift
    /// let disposable = worker.didSave.startWithValues { changes in
    ///     main.perform { main.merge(changes) }
    /// }
    /// ```
    public var didSave: Signal<ChangeSet, Never> {
        Signal { [saves] observer, lifetime in
            let observation = saves.add { observer.send(value: $0) }
            lifetime.observeEnded { observation.cancel() }
        }
    }
}
