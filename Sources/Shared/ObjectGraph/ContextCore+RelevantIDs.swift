extension ContextCore {
    /// The part of a parent's temporary → permanent `map` this context can use: the IDs of its
    /// registered objects, of objects it knows exist in the parent, and the IDs its registered
    /// objects refer to.
    ///
    /// A child that merges automatically takes only this part when its parent saves: taking the
    /// whole map would make it remember the new ID of every object the root ever saved (100,000
    /// entries after a 100,000-object import through workers), and the growing table's rehashes
    /// stalled the main queue for tens of milliseconds. Any other temporary ID is resolved when it
    /// is asked for, through the ancestors, exactly as in a child that does not merge.
    func relevantPart(of map: [ObjectID: ObjectID]) -> [ObjectID: ObjectID] {
        guard !map.isEmpty else { return map }
        let entities = Set(map.keys.map(\.entity))
        var referenced: Set<ObjectID> = []
        for object in registry.values
        where object.entity.relationships.contains(where: { entities.contains($0.destination) }) {
            for relationship in object.entity.relationships where entities.contains(relationship.destination) {
                let key = relationship.name
                for id in object.committed?[key]?.referencedIDs ?? [] where id.isTemporary { referenced.insert(id) }
                for id in object.changes[key]?.referencedIDs ?? [] where id.isTemporary { referenced.insert(id) }
                if let delta = object.toManyChanges[key] {
                    referenced.formUnion(delta.added.filter(\.isTemporary))
                    referenced.formUnion(delta.removed.filter(\.isTemporary))
                }
            }
        }
        return map.filter { old, _ in
            registry[old] != nil || parentTemporaryIDs.contains(old) || referenced.contains(old)
        }
    }
}
