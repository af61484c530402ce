import ContextBusSupport
import Foundation

extension Model {
    /// Loads a model from JSON shaped like `store.model`'s result; `version` is ignored.
    ///
    /// - Throws: `ModelError` naming the entity and key at fault.
    public init(json: JSONValue) throws(ModelError) {
        guard let entityList = json["entities"]?.arrayValue else {
            throw .malformed("expected an object with an 'entities' array")
        }
        var entities: [EntityDescription] = []
        for (i, item) in entityList.enumerated() {
            guard let name = item["name"]?.stringValue else { throw .malformed("entities[\(i)] has no 'name'") }
            var entity = EntityDescription(name: name, renamedFrom: try Self.renamedFrom(item, entity: name, key: nil))
            for a in item["attributes"]?.arrayValue ?? [] {
                guard let key = a["name"]?.stringValue else { throw .malformed("\(name): an attribute has no 'name'") }
                guard let typeName = a["type"]?.stringValue, let type = AttributeType(rawValue: typeName) else {
                    throw .malformed(
                        "\(name).\(key): 'type' must be one of \(AttributeType.allCases.map(\.rawValue).joined(separator: ", "))"
                    )
                }
                var defaultValue: PropertyValue?
                if let d = a["default"] {
                    guard let value = PropertyValue(json: d, type: type) else {
                        throw .invalidDefault(entity: name, key: key)
                    }
                    defaultValue = value
                }
                entity.attributes.append(
                    AttributeDescription(
                        key, type, optional: a["optional"]?.boolValue ?? false,
                        indexed: a["indexed"]?.boolValue ?? false,
                        default: defaultValue, renamedFrom: try Self.renamedFrom(a, entity: name, key: key)))
            }
            for r in item["relationships"]?.arrayValue ?? [] {
                guard let key = r["name"]?.stringValue else {
                    throw .malformed("\(name): a relationship has no 'name'")
                }
                guard let destination = r["destination"]?.stringValue else {
                    throw .malformed("\(name).\(key): no 'destination'")
                }
                guard let inverse = r["inverse"]?.stringValue else {
                    throw .missingInverse(entity: name, key: key, inverse: "")
                }
                let ruleName = r["deleteRule"]?.stringValue ?? "nullify"
                guard let rule = DeleteRule(rawValue: ruleName) else {
                    throw .malformed("\(name).\(key): deleteRule '\(ruleName)' is not nullify, cascade or deny")
                }
                entity.relationships.append(
                    RelationshipDescription(
                        key, destination: destination, toMany: r["toMany"]?.boolValue ?? false, inverse: inverse,
                        deleteRule: rule))
            }
            if let sets = item["uniqueBy"] {
                guard case .array(let lists) = sets else {
                    throw .malformed("\(name).uniqueBy: expected an array of arrays of keys")
                }
                for list in lists {
                    guard case .array(let keys) = list, keys.allSatisfy({ $0.stringValue != nil }) else {
                        throw .malformed("\(name).uniqueBy: expected an array of arrays of keys")
                    }
                    entity.uniqueBy.append(keys.compactMap(\.stringValue))
                }
            }
            entities.append(entity)
        }
        try self.init(entities: entities)
    }

    /// The `renamedFrom` member of an entity's or attribute's JSON: absent, or a string (checked as a name by
    /// `validate()`).
    private static func renamedFrom(_ item: JSONValue, entity: String, key: String?) throws(ModelError) -> String? {
        guard let value = item["renamedFrom"], !value.isNull else { return nil }
        guard let name = value.stringValue else {
            let text = (try? JSONWriter().string(value)) ?? "a non-string value"
            throw .invalidRenamedFrom(entity: entity, key: key, name: text)
        }
        return name
    }

    /// Loads a model from a JSON file.
    public init(contentsOf url: URL) throws {
        let data = try Data(contentsOf: url)
        let json: JSONValue
        do {
            json = try JSONParser().parse(data)
        } catch {
            throw ModelError.malformed("\(url.path) is not JSON: \(error)")
        }
        try self.init(json: json)
    }

    /// The model as `store.model` returns it, with `version` the version hash.
    public var jsonValue: JSONValue {
        .object([
            "version": .string(versionHash),
            "entities": .array(
                entities.map { entity in
                    var members: [String: JSONValue] = [
                        "name": .string(entity.name),
                        "attributes": .array(
                            entity.attributes.map { a in
                                var members: [String: JSONValue] = [
                                    "name": .string(a.name), "type": .string(a.type.rawValue),
                                    "optional": .bool(a.isOptional), "indexed": .bool(a.isIndexed),
                                ]
                                if let d = a.defaultValue { members["default"] = d.jsonValue }
                                if let old = a.renamedFrom { members["renamedFrom"] = .string(old) }
                                return .object(members)
                            }),
                        "relationships": .array(
                            entity.relationships.map { r in
                                .object([
                                    "name": .string(r.name), "destination": .string(r.destination),
                                    "toMany": .bool(r.isToMany), "inverse": .string(r.inverse),
                                    "deleteRule": .string(r.deleteRule.rawValue),
                                ])
                            }),
                    ]
                    if !entity.uniqueBy.isEmpty {
                        members["uniqueBy"] = .array(entity.uniqueBy.map { .array($0.map(JSONValue.string)) })
                    }
                    if let old = entity.renamedFrom { members["renamedFrom"] = .string(old) }
                    return .object(members)
                }),
        ])
    }
}

extension Model {
    /// The model `storesvc` serves without `--model`: the `Device` and `Reading` entities that
    /// `devicesvc` records into (`docs/protocol.md`, "The default model").
    public static let deviceReadings: Model = {
        do {
            return try Model(entities: [
                EntityDescription(
                    name: "Device",
                    attributes: [
                        AttributeDescription("address", .string, indexed: true),
                        AttributeDescription("name", .string, optional: true),
                        AttributeDescription("connected", .bool, default: .bool(false)),
                        AttributeDescription("lastSeen", .date, optional: true),
                    ],
                    relationships: [
                        RelationshipDescription(
                            "readings", destination: "Reading", toMany: true, inverse: "device", deleteRule: .cascade)
                    ],
                    uniqueBy: [["address"]]),
                EntityDescription(
                    name: "Reading",
                    attributes: [
                        AttributeDescription("characteristic", .string, indexed: true),
                        AttributeDescription("value", .binary),
                        AttributeDescription("time", .date),
                        AttributeDescription("chain", .string, optional: true),
                        // The value decoded from its standard format (battery %, °C, bpm, BTHome objects), when known.
                        AttributeDescription("number", .double, optional: true),
                        AttributeDescription("unit", .string, optional: true),
                    ],
                    relationships: [
                        RelationshipDescription(
                            "device", destination: "Device", inverse: "readings", deleteRule: .nullify)
                    ]),
            ])
        } catch {
            fatalError("the built-in default model is invalid: \(error)")
        }
    }()
}
