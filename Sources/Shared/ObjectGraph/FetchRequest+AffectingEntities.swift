extension FetchRequest {
    /// The entities whose changes can alter this request's result: its entity, plus every entity reachable through
    /// relationships when the predicate, a sort key or `alsoThroughRelationships` (a live query's section key) may
    /// look through them. What live queries watch (`LiveQuery`, storesvc's `store.watch`).
    package func entitiesAffectingResult(in model: Model, alsoThroughRelationships: Bool = false) -> Set<String> {
        var entities: Set<String> = [entity]
        let looksThrough =
            alsoThroughRelationships || predicate != nil || sortDescriptors.contains { $0.keyPath.count > 1 }
        guard looksThrough else { return entities }
        var frontier = [entity]
        while let name = frontier.popLast() {
            for relationship in model.entity(named: name)?.relationships ?? []
            where entities.insert(relationship.destination).inserted {
                frontier.append(relationship.destination)
            }
        }
        return entities
    }
}
