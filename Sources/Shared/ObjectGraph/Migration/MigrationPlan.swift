/// How a database made with one model becomes a database of another: the differences between the two as named
/// steps, each one possible in place or refused, and where each entity and attribute of the new model finds its
/// stored objects and values (docs/protocol.md, "Model changes (migration)").
///
/// ```swift
/// let plan = MigrationPlan(from: stored, to: new)
/// for line in plan.lines { print(line) }        // "ok       Reading.unit: attribute added (string, optional)"
/// guard plan.canMigrate else { … }
/// ```
///
/// Made from the two models alone (`MigrationPlan+Diff.swift`); a store adds the refusals only its data can
/// show (`uniqueBy` sets that live objects already collide on) with `refuse(_:)`.
public struct MigrationPlan: Sendable, Hashable {
    /// The model the database was made with.
    public let stored: Model
    /// The model it is opened with.
    public let target: Model
    /// Every difference, in the new model's order (entity, then its attributes, relationships and unique keys),
    /// the removed entities last.
    public private(set) var steps: [MigrationStep]
    /// For each entity of the new model that keeps stored objects: its stored name (itself, or the name it was
    /// renamed from).
    public let entityOrigins: [String: String]
    /// For each entity of `entityOrigins`: its attributes that keep stored values, new name → stored name.
    public let attributeOrigins: [String: [String: String]]

    init(
        stored: Model, target: Model, steps: [MigrationStep], entityOrigins: [String: String],
        attributeOrigins: [String: [String: String]]
    ) {
        self.stored = stored
        self.target = target
        self.steps = steps
        self.entityOrigins = entityOrigins
        self.attributeOrigins = attributeOrigins
    }

    /// Whether every step can be done in place.
    public var canMigrate: Bool { steps.allSatisfy(\.isPossible) }

    /// The steps that cannot be done.
    public var refusals: [MigrationStep] { steps.filter { !$0.isPossible } }

    /// Adds a refusal found in the data (after the step it is about, when there is one).
    public mutating func refuse(_ step: MigrationStep) {
        if let index = steps.lastIndex(where: { $0.entity == step.entity && $0.key == step.key }) {
            steps.insert(step, at: index + 1)
        } else {
            steps.append(step)
        }
    }

    /// One line per step: `ok       Reading.unit: attribute added (string, optional)` or
    /// `refused  Reading.value: cannot be migrated: type changed from double to int …`.
    public var lines: [String] {
        steps.map { ($0.isPossible ? "ok       " : "refused  ") + $0.description }
    }

    /// `model 50cf644a03c2d13e → 9a1b…: 3 differences, all can be migrated in place` or `…, 1 cannot be migrated`.
    public var summary: String {
        let from = stored.versionHash
        let to = target.versionHash
        guard from != to else { return "model \(from): no differences" }
        let count = steps.count == 1 ? "1 difference" : "\(steps.count) differences"
        let refused = refusals.count
        return "model \(from) → \(to): \(count), "
            + (refused == 0 ? "all can be migrated in place" : "\(refused) cannot be migrated")
    }

    /// The stored entity name whose objects the new entity `name` keeps, if any.
    public func storedName(ofEntity name: String) -> String? { entityOrigins[name] }

    /// The new name of the stored entity `name`; `nil` when the new model removes it.
    public func newName(ofStoredEntity name: String) -> String? {
        entityOrigins.first { $0.value == name }?.key
    }

    /// The attributes of the stored entity `storedEntity` the new model drops, with the relationships it drops.
    public func removedKeys(ofStoredEntity storedEntity: String) -> [String] {
        guard let new = newName(ofStoredEntity: storedEntity), let old = stored.entity(named: storedEntity),
            let entity = target.entity(named: new)
        else { return [] }
        let keptAttributes = Set(attributeOrigins[new, default: [:]].values)
        let attributes = old.attributes.map(\.name).filter { !keptAttributes.contains($0) }
        let relationships = old.relationships.map(\.name).filter { name in
            entity.relationship(named: name).map { !isKept(relationship: $0, of: entity) } ?? true
        }
        return attributes + relationships
    }

    /// Whether `relationship` of the new entity `entity` is a relationship the stored model has as it is (under
    /// the stored entity's name, pointing at the stored destination): its stored values are kept.
    public func isKept(relationship: RelationshipDescription, of entity: EntityDescription) -> Bool {
        guard let origin = entityOrigins[entity.name],
            let old = stored.entity(named: origin)?.relationship(
                named: relationship.name)
        else { return false }
        return entityOrigins[relationship.destination] == old.destination && old.isToMany == relationship.isToMany
            && old.inverse == relationship.inverse && old.deleteRule == relationship.deleteRule
    }
}
