// MARK: - On the context's queue: typed objects

extension ObjectContext {
    /// Inserts a new object of `type`'s entity, with a temporary ID and the model's default values (Core Data's
    /// `Device(context:)`).
    ///
    /// An entity the context's model does not have is a programmer error and traps.
    public func insert<Entity: ManagedEntity>(_ type: Entity.Type) -> Entity {
        Entity(wrapping: insert(entity: Entity.entityName))
    }

    /// Deletes `object`, applying its relationships' delete rules in memory.
    public func delete(_ object: some ManagedEntity) {
        delete(object.managedObject)
    }

    /// The objects `request` selects, typed.
    ///
    /// - Throws: as `fetch(_:)` with the dynamic request.
    public func fetch<Entity: ManagedEntity>(_ request: TypedFetchRequest<Entity>) throws -> [Entity] {
        try fetch(request.request).map(Entity.init(wrapping:))
    }

    /// The IDs of the objects `request` selects; `object(with:as:)` or `objects(with:as:)` turns them into
    /// typed faults.
    public func fetchIDs<Entity: ManagedEntity>(_ request: TypedFetchRequest<Entity>) throws -> [ObjectID] {
        try fetchIDs(request.request)
    }

    /// How many objects `request` selects (after its offset and limit).
    public func count<Entity: ManagedEntity>(for request: TypedFetchRequest<Entity>) throws -> Int {
        try count(for: request.request)
    }

    /// The object for `id` as a `type`: the registered one or a new fault (`object(with:)`).
    ///
    /// An `id` of another entity is a programmer error and traps; `existingObject(with:as:)` throws instead.
    public func object<Entity: ManagedEntity>(with id: ObjectID, as type: Entity.Type) -> Entity {
        precondition(id.entity == Entity.entityName, "\(id) is not an object of \(Entity.entityName)")
        return Entity(wrapping: object(with: id))
    }

    /// The objects for `ids` as `type`s, in the same order (`objects(with:)`): faults until touched.
    public func objects<Entity: ManagedEntity>(with ids: [ObjectID], as type: Entity.Type) -> [Entity] {
        ids.map { object(with: $0, as: type) }
    }

    /// The object for `id` as a `type`, with its values loaded (`existingObject(with:)`).
    ///
    /// - Throws: `StoreError.invalidRequest` (field `id`) for an ID of another entity; `StoreError.notFound`
    ///   when no such object exists in this context's view.
    public func existingObject<Entity: ManagedEntity>(with id: ObjectID, as type: Entity.Type) throws -> Entity {
        guard id.entity == Entity.entityName else {
            throw StoreError.invalidRequest(field: "id", message: "\(id) is not an object of \(Entity.entityName)")
        }
        return Entity(wrapping: try existingObject(with: id))
    }
}
