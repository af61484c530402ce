/// Comparing the stored model with the new one.
///
/// An entity or attribute of the new model keeps the stored one of its own name; failing that, the one its
/// `renamedFrom` names. A `renamedFrom` is only read when the stored model lacks the new name (once a database is
/// migrated the annotation may stay in the model file: it is then ignored), and a stored name goes to at most one
/// new entity or attribute. Everything PROTOCOL.md lists is a possible step; any other difference is a refusal
/// naming the entity and key.
extension MigrationPlan {
    /// The plan from `stored` (the model a database was made with) to `target`.
    public init(from stored: Model, to target: Model) {
        var differ = ModelDiffer(stored: stored, target: target)
        differ.compare()
        self.init(
            stored: stored, target: target, steps: differ.steps, entityOrigins: differ.entityOrigins,
            attributeOrigins: differ.attributeOrigins)
    }
}

/// The comparison itself, entity by entity.
private struct ModelDiffer {
    let stored: Model
    let target: Model
    var steps: [MigrationStep] = []
    var entityOrigins: [String: String] = [:]
    var attributeOrigins: [String: [String: String]] = [:]

    init(stored: Model, target: Model) {
        self.stored = stored
        self.target = target
    }

    mutating func compare() {
        var entitySteps: [String: [MigrationStep]] = [:]
        // Which new entity takes which stored one; the stored ones a refusal names are neither kept nor removed.
        var claims: [String: [String]] = [:]
        var refusedEntities: Set<String> = []
        for entity in target.entities {
            if stored.entity(named: entity.name) != nil {
                if let old = entity.renamedFrom, stored.entity(named: old) != nil {
                    entitySteps[entity.name, default: []].append(
                        MigrationStep(entity: entity.name, change: .refused(.renamedFromAmbiguous(old))))
                    refusedEntities.formUnion([entity.name, old])
                    continue
                }
                claims[entity.name, default: []].append(entity.name)
            } else if let old = entity.renamedFrom {
                if stored.entity(named: old) != nil {
                    claims[old, default: []].append(entity.name)
                } else {
                    entitySteps[entity.name, default: []].append(
                        MigrationStep(entity: entity.name, change: .refused(.renamedFromUnknown(old))))
                }
            } else {
                entitySteps[entity.name, default: []].append(MigrationStep(entity: entity.name, change: .entityAdded))
            }
        }
        for (old, claimants) in claims {
            guard claimants.count > 1 else {
                entityOrigins[claimants[0]] = old
                continue
            }
            // One kept under its own name keeps it; those renamed from it are refused. Two renamed: both refused.
            for claimant in claimants where claimant != old {
                let others = claimants.filter { $0 != claimant }.joined(separator: " and ")
                entitySteps[claimant, default: []].append(
                    MigrationStep(entity: claimant, change: .refused(.renamedFromTaken(old, by: others))))
                refusedEntities.insert(old)
            }
            if claimants.contains(old) { entityOrigins[old] = old }
        }
        // A stored entity that several renamed ones claim is neither kept nor removed: the plan is refused anyway.
        let claimed = Set(entityOrigins.values).union(refusedEntities)
        for entity in target.entities {
            var list = entitySteps[entity.name] ?? []
            if let origin = entityOrigins[entity.name], let old = stored.entity(named: origin) {
                if origin != entity.name {
                    list.append(MigrationStep(entity: entity.name, change: .entityRenamed(from: origin)))
                }
                list += compare(old, with: entity)
            }
            steps += list
        }
        for entity in stored.entities where !claimed.contains(entity.name) {
            steps.append(MigrationStep(entity: entity.name, change: .entityRemoved))
        }
    }

    /// The differences between one stored entity and the new entity that keeps its objects.
    private mutating func compare(_ old: EntityDescription, with entity: EntityDescription) -> [MigrationStep] {
        var list: [MigrationStep] = []
        func add(_ key: String?, _ change: MigrationStep.Change) {
            list.append(MigrationStep(entity: entity.name, key: key, change: change))
        }
        // Attributes: which new one takes which stored one; the stored ones a refusal names are neither kept nor
        // removed.
        var claims: [String: [String]] = [:]
        var attributeSteps: [String: [MigrationStep.Change]] = [:]
        var contested: Set<String> = []
        for attribute in entity.attributes {
            if old.attribute(named: attribute.name) != nil {
                if let previous = attribute.renamedFrom, old.attribute(named: previous) != nil {
                    attributeSteps[attribute.name, default: []].append(.refused(.renamedFromAmbiguous(previous)))
                    contested.formUnion([attribute.name, previous])
                    continue
                }
                claims[attribute.name, default: []].append(attribute.name)
            } else if old.relationship(named: attribute.name) != nil {
                attributeSteps[attribute.name, default: []].append(.refused(.kindChanged))
            } else if let previous = attribute.renamedFrom {
                if old.attribute(named: previous) != nil {
                    claims[previous, default: []].append(attribute.name)
                } else if old.relationship(named: previous) != nil {
                    attributeSteps[attribute.name, default: []].append(.refused(.renamedFromRelationship(previous)))
                } else {
                    attributeSteps[attribute.name, default: []].append(.refused(.renamedFromUnknown(previous)))
                }
            } else if attribute.isOptional || !(attribute.defaultValue?.isNull ?? true) {
                attributeSteps[attribute.name, default: []].append(.attributeAdded(attribute))
            } else {
                attributeSteps[attribute.name, default: []].append(.refused(.requiredWithoutDefault))
            }
        }
        var origins: [String: String] = [:]
        for (previous, claimants) in claims {
            guard claimants.count > 1 else {
                origins[claimants[0]] = previous
                continue
            }
            for claimant in claimants where claimant != previous {
                let others = claimants.filter { $0 != claimant }.map { "\(entity.name).\($0)" }.joined(
                    separator: " and ")
                attributeSteps[claimant, default: []].append(.refused(.renamedFromTaken(previous, by: others)))
            }
            contested.insert(previous)
            if claimants.contains(previous) { origins[previous] = previous }
        }
        attributeOrigins[entity.name] = origins
        for attribute in entity.attributes {
            for change in attributeSteps[attribute.name] ?? [] { add(attribute.name, change) }
            guard let origin = origins[attribute.name], let stored = old.attribute(named: origin) else { continue }
            if origin != attribute.name { add(attribute.name, .attributeRenamed(from: origin)) }
            for change in Self.changes(from: stored, to: attribute) { add(attribute.name, change) }
        }
        let keptAttributes = Set(origins.values).union(contested)
        for attribute in old.attributes where !keptAttributes.contains(attribute.name) {
            // One under the same name that is now a relationship is refused on the relationship's side.
            if entity.relationship(named: attribute.name) == nil { add(attribute.name, .attributeRemoved) }
        }
        // Relationships keep their names; only their destination's entity may be renamed.
        for relationship in entity.relationships {
            if let previous = old.relationship(named: relationship.name) {
                let changes = relationshipChanges(from: previous, to: relationship)
                if !changes.isEmpty { add(relationship.name, .refused(.relationshipChanged(changes))) }
            } else if old.attribute(named: relationship.name) != nil {
                add(relationship.name, .refused(.kindChanged))
            } else {
                add(relationship.name, .relationshipAdded(relationship))
            }
        }
        for relationship in old.relationships
        where entity.relationship(named: relationship.name) == nil && entity.attribute(named: relationship.name) == nil
        {
            add(relationship.name, .relationshipRemoved)
        }
        // Unique keys, compared under the new names; a set that names a key the new model drops is gone with it.
        let newNames = Dictionary(origins.map { ($0.value, $0.key) }, uniquingKeysWith: { first, _ in first })
        let storedSets = old.uniqueBy.compactMap { keys -> [String]? in
            let mapped = keys.map { key in
                newNames[key]
                    ?? (entity.relationship(named: key) != nil && old.relationship(named: key) != nil ? key : nil)
            }
            return mapped.contains(nil) ? nil : mapped.compactMap { $0 }.sorted()
        }
        let newSets = entity.uniqueBy.map { $0.sorted() }
        for (keys, sorted) in zip(entity.uniqueBy, newSets) where !storedSets.contains(sorted) {
            add(nil, .uniqueByAdded(keys))
        }
        for keys in storedSets where !newSets.contains(keys) { add(nil, .uniqueByRemoved(keys)) }
        return list
    }

    /// The differences of one attribute that keeps its stored values.
    private static func changes(
        from old: AttributeDescription, to new: AttributeDescription
    ) -> [MigrationStep.Change] {
        var changes: [MigrationStep.Change] = []
        if old.type != new.type {
            changes.append(
                old.type == .int && new.type == .double
                    ? .widenedToDouble : .refused(.typeChanged(from: old.type, to: new.type)))
        }
        let oldDefault = normalized(old.defaultValue, as: new.type)
        let newDefault = normalized(new.defaultValue, as: new.type)
        switch (old.isOptional, new.isOptional) {
        case (false, true): changes.append(.optionalTurnedOn)
        case (true, false):
            if let value = newDefault {
                changes.append(.optionalTurnedOff(default: value))
            } else {
                changes.append(.refused(.optionalTurnedOffWithoutDefault))
            }
        default: break
        }
        let fillsNulls = old.isOptional && !new.isOptional
        if oldDefault != newDefault && !fillsNulls {
            changes.append(.refused(.defaultChanged(from: oldDefault, to: newDefault)))
        }
        if old.isIndexed != new.isIndexed { changes.append(new.isIndexed ? .indexAdded : .indexRemoved) }
        return changes
    }

    /// A default as compared: none for `null`, an `int` default of an attribute widened to `double` as that double.
    private static func normalized(_ value: PropertyValue?, as type: AttributeType) -> PropertyValue? {
        switch value {
        case nil, .null?: return nil
        case .int(let number)? where type == .double: return .double(Double(number))
        default: return value
        }
    }

    /// What changed in a relationship both entities have, in words; empty when nothing did.
    private func relationshipChanges(from old: RelationshipDescription, to new: RelationshipDescription) -> String {
        var changes: [String] = []
        let destination = entityOrigins.first { $0.value == old.destination }?.key
        if destination != new.destination { changes.append("destination \(old.destination) → \(new.destination)") }
        if old.isToMany != new.isToMany {
            changes.append(new.isToMany ? "to-one → to-many" : "to-many → to-one")
        }
        if old.inverse != new.inverse { changes.append("inverse \(old.inverse) → \(new.inverse)") }
        if old.deleteRule != new.deleteRule {
            changes.append("delete rule \(old.deleteRule.rawValue) → \(new.deleteRule.rawValue)")
        }
        return changes.joined(separator: ", ")
    }
}
