import ContextBusReactive

extension ContextStack {
    /// Fetches the IDs of the objects `request` selects on a new worker, off the main queue
    /// (`fetchIDsInBackground(_:)`); `main.objects(with:as:)` turns them into typed faults on main.
    ///
    /// ```swift
    /// stack.fetchIDsInBackground(try Reading.fetchRequest(where: "characteristic == '2a19'", sortedBy: [.time]))
    ///     .deliver(on: stack.main.scheduler)
    ///     .startWithValues { ids in show(stack.main.objects(with: ids, as: Reading.self)) }
    /// ```
    public func fetchIDsInBackground<Entity: ManagedEntity>(
        _ request: TypedFetchRequest<Entity>
    ) -> Signal<[ObjectID], StoreError> {
        fetchIDsInBackground(request.request)
    }
}
