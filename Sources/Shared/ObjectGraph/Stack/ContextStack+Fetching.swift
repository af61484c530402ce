import ContextBusReactive

extension ContextStack {
    /// Fetches the IDs of the objects `request` selects on a new worker, off the main queue: the
    /// first half of "fetch IDs in the background, materialise them on main".
    ///
    /// The signal is cold: each start runs the fetch on a fresh worker (so it sees everything the
    /// root holds, saved or not), sends the IDs on the worker's queue and completes. Turn the IDs
    /// into faults on main with `main.objects(with:)`; their values load when first touched.
    ///
    /// ```swift
    /// let request = FetchRequest(entity: "Reading", predicate: try ObjectPredicate(format: "characteristic == '2a19'"))
    /// stack.fetchIDsInBackground(request)
    ///     .deliver(on: stack.main.scheduler)
    ///     .startWithValues { ids in
    ///         let readings = stack.main.objects(with: ids)   // faults, on main's queue
    ///     }
    /// ```
    public func fetchIDsInBackground(_ request: FetchRequest) -> Signal<[ObjectID], StoreError> {
        let stack = self
        return Signal { observer, lifetime in
            let worker = stack.newWorker(name: "fetch")
            lifetime += ContextScheduler(worker).schedule {
                do {
                    observer.send(value: try worker.fetchIDs(request))
                    observer.sendCompleted()
                } catch let error as StoreError {
                    observer.send(error: error)
                } catch {
                    observer.send(error: .unavailable(String(describing: error)))
                }
            }
        }
    }
}

extension ObjectContext {
    /// The objects for `ids` in this context, in the same order: registered objects as they are,
    /// the others as new faults (values load on first access). On the context's queue.
    public func objects(with ids: [ObjectID]) -> [ManagedObject] {
        ids.map { object(with: $0) }
    }
}
