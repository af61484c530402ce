import Foundation

/// The schema of an object graph: its entities, their attributes and relationships.
///
/// Built in Swift or loaded from JSON shaped like `store.model`'s result. A model is checked
/// when it is made (`validated()`), so a context or store never meets an inconsistent one.
public struct Model: Sendable, Hashable {
    /// The entities, in the order they were declared.
    public let entities: [EntityDescription]
    private let index: [String: Int]

    /// Makes a model and checks it.
    ///
    /// - Throws: `ModelError` naming the entity and key at fault.
    public init(entities: [EntityDescription]) throws(ModelError) {
        var index: [String: Int] = [:]
        for (i, entity) in entities.enumerated() {
            guard index[entity.name] == nil else { throw .duplicateEntity(entity.name) }
            index[entity.name] = i
        }
        self.entities = entities
        self.index = index
        try validate()
    }

    /// The entity named `name`.
    public func entity(named name: String) -> EntityDescription? {
        index[name].map { entities[$0] }
    }

    /// A stable hash of everything that shapes storage: entity, attribute and relationship
    /// names, types, optionality, indexes and defaults. Declaration order does not matter, and neither does
    /// `renamedFrom` (it says where a name came from, not how anything is stored: a model keeps its hash when the
    /// annotation is dropped after the migration).
    public var versionHash: String {
        var text = ""
        for entity in entities.sorted(by: { $0.name < $1.name }) {
            text += "E:\(entity.name)\n"
            for a in entity.attributes.sorted(by: { $0.name < $1.name }) {
                text +=
                    "A:\(a.name):\(a.type.rawValue):\(a.isOptional):\(a.isIndexed):\(a.defaultValue.map { "\($0)" } ?? "-")\n"
            }
            for r in entity.relationships.sorted(by: { $0.name < $1.name }) {
                text += "R:\(r.name):\(r.destination):\(r.isToMany):\(r.inverse):\(r.deleteRule.rawValue)\n"
            }
            // Only when declared, so that a model without unique keys keeps the hash it always had.
            for keys in entity.uniqueBy.map({ $0.sorted() }).sorted(by: { $0.lexicographicallyPrecedes($1) }) {
                text += "U:\(keys.joined(separator: ","))\n"
            }
        }
        return fnv1a64Hex(text)
    }

    /// Names are compared ignoring case, and names starting with `Z_` are the store's: a SQL store
    /// maps entities to tables and keys to columns, whose names SQLite compares ignoring case,
    /// and keeps its own tables, columns and indexes under the `Z_` prefix. Entity names starting
    /// with `sqlite_` are SQLite's own (it refuses to create such a table).
    private func validate() throws(ModelError) {
        var entityNames: Set<String> = []
        for entity in entities {
            guard Model.isValidName(entity.name), !Model.isStoreName(entity.name),
                !Model.isSQLiteName(entity.name)
            else {
                throw .invalidName(entity: entity.name, key: nil)
            }
            guard entityNames.insert(entity.name.lowercased()).inserted else { throw .duplicateEntity(entity.name) }
            var seen: Set<String> = []
            for key in entity.attributes.map(\.name) + entity.relationships.map(\.name) {
                guard Model.isValidName(key) else { throw .invalidName(entity: entity.name, key: key) }
                guard !Model.reservedKeys.contains(key), !Model.isStoreName(key) else {
                    throw .reservedKey(entity: entity.name, key: key)
                }
                guard seen.insert(key.lowercased()).inserted else { throw .duplicateKey(entity: entity.name, key: key) }
            }
            for attribute in entity.attributes {
                if let value = attribute.defaultValue, !value.isNull,
                    value.attributeType != attribute.type || !value.hasJSONForm
                {
                    throw .invalidDefault(entity: entity.name, key: attribute.name)
                }
            }
            for relationship in entity.relationships {
                guard let destination = self.entity(named: relationship.destination) else {
                    throw .unknownDestination(
                        entity: entity.name, key: relationship.name, destination: relationship.destination)
                }
                guard let inverse = destination.relationship(named: relationship.inverse) else {
                    throw .missingInverse(entity: entity.name, key: relationship.name, inverse: relationship.inverse)
                }
                guard inverse.destination == entity.name, inverse.inverse == relationship.name else {
                    throw .inverseMismatch(entity: entity.name, key: relationship.name)
                }
            }
            try validateRenames(of: entity)
            for keys in entity.uniqueBy {
                guard !keys.isEmpty else { throw .invalidUniqueKey(entity: entity.name, key: nil) }
                if let twice = keys.enumerated().first(where: { keys[..<$0.offset].contains($0.element) })?.element {
                    throw .invalidUniqueKey(entity: entity.name, key: twice)
                }
                for key in keys
                where entity.attribute(named: key) == nil
                    && entity.relationship(named: key).map({ $0.isToMany }) != false
                {
                    throw .invalidUniqueKey(entity: entity.name, key: key)
                }
            }
        }
    }

    /// A `renamedFrom` must be a name an entity (or an attribute) could have had, other than its own; two
    /// attributes of one entity cannot both come from one old name. Whether the old name exists is a question
    /// about the stored model, answered by `MigrationPlan`.
    private func validateRenames(of entity: EntityDescription) throws(ModelError) {
        if let old = entity.renamedFrom {
            guard Model.isValidName(old), !Model.isStoreName(old), !Model.isSQLiteName(old),
                old.lowercased() != entity.name.lowercased()
            else { throw .invalidRenamedFrom(entity: entity.name, key: nil, name: old) }
        }
        var oldNames: Set<String> = []
        for attribute in entity.attributes {
            guard let old = attribute.renamedFrom else { continue }
            guard Model.isValidName(old), !Model.reservedKeys.contains(old), !Model.isStoreName(old),
                old.lowercased() != attribute.name.lowercased()
            else { throw .invalidRenamedFrom(entity: entity.name, key: attribute.name, name: old) }
            guard oldNames.insert(old).inserted else {
                throw .duplicateRenamedFrom(entity: entity.name, key: attribute.name, name: old)
            }
        }
    }

    /// Names the store keeps for itself.
    static let reservedKeys: Set<String> = ["id", "version"]

    /// Whether `name` (already a valid name, so ASCII) starts with `Z_` in any case.
    static func isStoreName(_ name: String) -> Bool {
        name.uppercased().hasPrefix("Z_")
    }

    /// Whether `name` starts with `sqlite_` in any case: SQLite reserves such table names.
    static func isSQLiteName(_ name: String) -> Bool {
        name.lowercased().hasPrefix("sqlite_")
    }

    static func isValidName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first.properties.isAlphabetic || first == "_" else { return false }
        return name.unicodeScalars.allSatisfy {
            ($0.isASCII && ($0.properties.isAlphabetic || $0 == "_")) || ("0"..."9").contains($0)
        }
            && name.unicodeScalars.allSatisfy(\.isASCII)
    }
}

/// FNV-1a, 64 bits, as 16 hex digits: stable across runs and platforms (unlike `Hasher`).
func fnv1a64Hex(_ text: String) -> String {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in text.utf8 {
        hash ^= UInt64(byte)
        hash = hash &* 0x0000_0100_0000_01b3
    }
    let hex = String(hash, radix: 16)
    return String(repeating: "0", count: 16 - hex.count) + hex
}

/// One entity: a kind of object, with attributes and relationships.
public struct EntityDescription: Sendable, Hashable {
    public var name: String
    public var attributes: [AttributeDescription]
    public var relationships: [RelationshipDescription]
    /// Sets of keys (attributes or to-one relationships) whose values are unique together among the entity's
    /// live objects; `null` never collides, as in SQL (docs/protocol.md, "Unique constraints and upsert").
    public var uniqueBy: [[String]]
    /// The name the entity had in the model before this one: a database made with that model keeps its objects
    /// and their numbers under this name when it is migrated (`Sensor/3` becomes `Probe/3`). `nil` for an entity
    /// that was not renamed. Not part of `Model.versionHash`.
    public var renamedFrom: String?

    public init(
        name: String, attributes: [AttributeDescription] = [], relationships: [RelationshipDescription] = [],
        uniqueBy: [[String]] = [], renamedFrom: String? = nil
    ) {
        self.name = name
        self.attributes = attributes
        self.relationships = relationships
        self.uniqueBy = uniqueBy
        self.renamedFrom = renamedFrom
    }

    /// The attribute named `name`.
    public func attribute(named name: String) -> AttributeDescription? {
        attributes.first { $0.name == name }
    }

    /// The relationship named `name`.
    public func relationship(named name: String) -> RelationshipDescription? {
        relationships.first { $0.name == name }
    }

    /// Every property name: attributes first, then relationships.
    public var propertyNames: [String] { attributes.map(\.name) + relationships.map(\.name) }
}

/// One attribute of an entity.
public struct AttributeDescription: Sendable, Hashable {
    public var name: String
    public var type: AttributeType
    public var isOptional: Bool
    public var isIndexed: Bool
    /// The value a new object starts with when its insert does not set this attribute.
    public var defaultValue: PropertyValue?
    /// The name the attribute had in the model before this one (in the same entity): a database made with that
    /// model keeps its values under this name when it is migrated. `nil` for an attribute that was not renamed.
    /// Not part of `Model.versionHash`.
    public var renamedFrom: String?

    public init(
        _ name: String, _ type: AttributeType, optional: Bool = false, indexed: Bool = false,
        default defaultValue: PropertyValue? = nil, renamedFrom: String? = nil
    ) {
        self.name = name
        self.type = type
        self.isOptional = optional
        self.isIndexed = indexed
        self.defaultValue = defaultValue
        self.renamedFrom = renamedFrom
    }
}

/// What happens to the objects on the other side when an object is deleted.
public enum DeleteRule: String, Sendable, Hashable, Codable, CaseIterable {
    /// The other side forgets the deleted object.
    case nullify
    /// The objects on the other side are deleted too.
    case cascade
    /// The delete fails validation while the relationship is not empty.
    case deny
}

/// One relationship of an entity. Every relationship has an inverse, kept in sync.
public struct RelationshipDescription: Sendable, Hashable {
    public var name: String
    public var destination: String
    public var isToMany: Bool
    public var inverse: String
    public var deleteRule: DeleteRule

    public init(
        _ name: String, destination: String, toMany: Bool = false, inverse: String, deleteRule: DeleteRule = .nullify
    ) {
        self.name = name
        self.destination = destination
        self.isToMany = toMany
        self.inverse = inverse
        self.deleteRule = deleteRule
    }
}

/// Why a model is invalid; every case names the entity, and the key when there is one.
public enum ModelError: Error, Hashable, CustomStringConvertible {
    case duplicateEntity(String)
    case duplicateKey(entity: String, key: String)
    case invalidName(entity: String, key: String?)
    case reservedKey(entity: String, key: String)
    case invalidDefault(entity: String, key: String)
    case unknownDestination(entity: String, key: String, destination: String)
    case missingInverse(entity: String, key: String, inverse: String)
    case inverseMismatch(entity: String, key: String)
    /// A `uniqueBy` set that is empty (`key` nil), names a key twice, or names a key that is not an attribute or
    /// a to-one relationship.
    case invalidUniqueKey(entity: String, key: String?)
    /// A `renamedFrom` that cannot be an old name of the entity (`key` nil) or attribute: not a valid name, a
    /// name of the store's, or the entity's or attribute's own name.
    case invalidRenamedFrom(entity: String, key: String?, name: String)
    /// Two attributes of one entity both say they were renamed from `name`.
    case duplicateRenamedFrom(entity: String, key: String, name: String)
    case malformed(String)

    public var description: String {
        switch self {
        case .duplicateEntity(let e): return "model: entity '\(e)' is declared twice (names are compared ignoring case)"
        case .duplicateKey(let e, let k): return "model: \(e).\(k) is declared twice (keys are compared ignoring case)"
        case .invalidName(let e, let k?): return "model: \(e).\(k) is not a valid name (ASCII letters, digits, _)"
        case .invalidName(let e, nil):
            return
                "model: '\(e)' is not a valid entity name (ASCII letters, digits, _; not starting with Z_ or sqlite_)"
        case .reservedKey(let e, let k): return "model: \(e).\(k) uses a reserved name (id, version, or Z_…)"
        case .invalidDefault(let e, let k):
            return "model: \(e).\(k) has a default of the wrong type, or NaN or an infinity (JSON has no form for them)"
        case .unknownDestination(let e, let k, let d): return "model: \(e).\(k) points at unknown entity '\(d)'"
        case .missingInverse(let e, let k, let i): return "model: \(e).\(k) names inverse '\(i)', which does not exist"
        case .inverseMismatch(let e, let k): return "model: \(e).\(k) and its inverse do not point at each other"
        case .invalidUniqueKey(let e, let k?):
            return
                "model: \(e).uniqueBy names '\(k)', which is not an attribute or a to-one relationship of \(e) (or is named twice)"
        case .invalidUniqueKey(let e, nil): return "model: \(e).uniqueBy has an empty set of keys"
        case .invalidRenamedFrom(let e, let k, let name):
            return
                "model: \(k.map { "\(e).\($0)" } ?? e): renamedFrom '\(name)' is not a name it could have had before "
                + "(ASCII letters, digits, _; not its own name, not id, version, Z_… or sqlite_…; an attribute is renamed "
                + "within its entity, so the old name has no entity part)"
        case .duplicateRenamedFrom(let e, let k, let name):
            return "model: \(e).\(k): renamedFrom '\(name)', which another attribute of \(e) is renamed from too"
        case .malformed(let why): return "model: \(why)"
        }
    }
}
