import ContextBusSupport

/// One difference between the model a database was made with and a new one, and whether a store can migrate
/// it in place (docs/protocol.md, "Model changes (migration)").
///
/// `entity` is the entity's name in the new model (its stored name for one the new model removes), `key` the
/// attribute's or relationship's likewise; `nil` for a change of the entity as a whole.
public struct MigrationStep: Sendable, Hashable, CustomStringConvertible {
    /// What changed.
    public enum Change: Sendable, Hashable {
        case entityAdded
        case entityRemoved
        /// Its objects keep their numbers: `Sensor/3` becomes `Probe/3`.
        case entityRenamed(from: String)
        /// Optional, or with a default that existing objects take.
        case attributeAdded(AttributeDescription)
        case attributeRemoved
        case attributeRenamed(from: String)
        case indexAdded
        case indexRemoved
        case optionalTurnedOn
        /// Existing `null`s become `default`.
        case optionalTurnedOff(default: PropertyValue)
        case widenedToDouble
        /// With its inverse (which has a step of its own when it is in an entity both models have).
        case relationshipAdded(RelationshipDescription)
        case relationshipRemoved
        case uniqueByAdded([String])
        case uniqueByRemoved([String])
        /// A difference that cannot be migrated in place.
        case refused(Refusal)
    }

    /// Why a difference cannot be migrated in place; the database is left as it is.
    public enum Refusal: Sendable, Hashable {
        /// A type changed other than `int` to `double`.
        case typeChanged(from: AttributeType, to: AttributeType)
        /// A required attribute added without a default: existing objects would have no value.
        case requiredWithoutDefault
        /// `optional` turned off without a default to fill the existing `null`s with.
        case optionalTurnedOffWithoutDefault
        /// The default changed (other than given with `optional` turned off, which fills existing `null`s).
        case defaultChanged(from: PropertyValue?, to: PropertyValue?)
        /// A relationship both models have changed its destination, cardinality, inverse or delete rule; the text
        /// says which (`destination Device → Sensor`).
        case relationshipChanged(String)
        /// An attribute turned into a relationship or back under one name.
        case kindChanged
        /// `renamedFrom` names nothing of that kind in the stored model (stored entity, or attribute of the
        /// stored entity).
        case renamedFromUnknown(String)
        /// `renamedFrom` names a relationship: only entities and attributes are renamed.
        case renamedFromRelationship(String)
        /// Both the new name and the `renamedFrom` name are in the stored model.
        case renamedFromAmbiguous(String)
        /// The stored name that `renamedFrom` takes is taken by another entity or attribute of the new model too
        /// (kept under its own name, or renamed from it as well).
        case renamedFromTaken(String, by: String)
        /// Live objects that share the values of a `uniqueBy` set being added: each inner list one group of
        /// object numbers; `more` groups are left out of the list.
        case uniqueKeyCollisions(keys: [String], groups: [[Int64]], more: Int)
    }

    public var entity: String
    public var key: String?
    public var change: Change

    public init(entity: String, key: String? = nil, change: Change) {
        self.entity = entity
        self.key = key
        self.change = change
    }

    /// Whether the store can make this change in place.
    public var isPossible: Bool {
        if case .refused = change { return false }
        return true
    }

    /// `Entity.key` or `Entity`.
    public var subject: String { key.map { "\(entity).\($0)" } ?? entity }

    /// `Reading.unit: attribute added (string, optional)`, `Reading.value: refused: type changed from double to int …`.
    public var description: String { "\(subject): \(what)" }

    /// The change in words, without the subject.
    public var what: String {
        switch change {
        case .entityAdded: return "entity added"
        case .entityRemoved: return "entity removed (its objects are deleted)"
        case .entityRenamed(let old): return "entity renamed from \(old) (objects keep their numbers)"
        case .attributeAdded(let attribute):
            var details = [attribute.type.rawValue]
            if attribute.isOptional { details.append("optional") }
            if attribute.isIndexed { details.append("indexed") }
            if let value = attribute.defaultValue, !value.isNull {
                details.append("existing objects take the default \(value.jsonValue.migrationText)")
            }
            return "attribute added (\(details.joined(separator: ", ")))"
        case .attributeRemoved: return "attribute removed (its values are dropped)"
        case .attributeRenamed(let old): return "attribute renamed from \(old)"
        case .indexAdded: return "index added"
        case .indexRemoved: return "index removed"
        case .optionalTurnedOn: return "made optional"
        case .optionalTurnedOff(let value):
            return "made required (existing nulls take the default \(value.jsonValue.migrationText))"
        case .widenedToDouble: return "type widened from int to double"
        case .relationshipAdded(let relationship):
            return
                "relationship added (\(relationship.isToMany ? "to-many" : "to-one") \(relationship.destination), inverse \(relationship.inverse))"
        case .relationshipRemoved: return "relationship removed (with its inverse)"
        case .uniqueByAdded(let keys): return "uniqueBy [\(keys.joined(separator: ", "))] added"
        case .uniqueByRemoved(let keys): return "uniqueBy [\(keys.joined(separator: ", "))] removed"
        case .refused(let refusal): return "cannot be migrated: \(refusal.text(subject: subject, entity: entity))"
        }
    }
}

extension MigrationStep.Refusal {
    /// The reason in words.
    func text(subject: String, entity: String) -> String {
        switch self {
        case .typeChanged(let from, let to):
            return "type changed from \(from.rawValue) to \(to.rawValue) (only int to double can be migrated)"
        case .requiredWithoutDefault:
            return "a required attribute added without a default (existing objects would have no value)"
        case .optionalTurnedOffWithoutDefault:
            return "made required without a default (existing nulls would have no value)"
        case .defaultChanged(let from, let to):
            return "default changed from \(from?.jsonValue.migrationText ?? "none") to "
                + "\(to?.jsonValue.migrationText ?? "none") (a default can change only when it fills the nulls of an attribute made required)"
        case .relationshipChanged(let what): return "relationship changed: \(what)"
        case .kindChanged: return "changed between attribute and relationship under one name"
        case .renamedFromUnknown(let old): return "renamedFrom '\(old)', which the stored model does not have"
        case .renamedFromRelationship(let old):
            return
                "renamedFrom '\(old)', which is a relationship of the stored \(entity) (only attributes and entities are renamed)"
        case .renamedFromAmbiguous(let old):
            return "renamedFrom '\(old)', but the stored model has both \(subject) and \(old)"
        case .renamedFromTaken(let old, let other):
            return "renamedFrom '\(old)', which \(other) takes too"
        case .uniqueKeyCollisions(let keys, let groups, let more):
            let listed = groups.map { group in group.map { "\(entity)/\($0)" }.joined(separator: ", ") }
            return "uniqueBy [\(keys.joined(separator: ", "))] added, but live objects share its values: "
                + listed.joined(separator: "; ") + (more > 0 ? "; and \(more) more groups" : "")
        }
    }
}

extension JSONValue {
    /// A value as the plan's lines show it: compact JSON.
    var migrationText: String {
        (try? JSONWriter(sortsKeys: true).string(self)) ?? "\(self)"
    }
}
