import Foundation

@testable import ContextBusObjectGraph

/// Foundation also declares `ObjectPredicate`, `PredicateOperand` and `ObjectPredicateError` (the `#ObjectPredicate` macro's types);
/// in this module the names mean ContextBus's.
typealias PredicateOperand = ContextBusObjectGraph.PredicateOperand
typealias ObjectPredicateError = ContextBusObjectGraph.ObjectPredicateError

/// The model the predicate tests use: every attribute type, optional and not (binary on both
/// sides of the to-one / to-many pair, for GATT-style numeric reads), a to-one /
/// to-many pair (Device.readings ↔ Reading.device) and a many-to-many pair (Device.tags ↔ Tag.devices).
enum PredicateTestFixtures {
    static let model: Model = try! Model(entities: [
        EntityDescription(
            name: "Device",
            attributes: [
                AttributeDescription("name", .string, optional: true),
                AttributeDescription("address", .string),
                AttributeDescription("rssi", .int),
                AttributeDescription("weight", .double, optional: true),
                AttributeDescription("connected", .bool),
                AttributeDescription("lastSeen", .date, optional: true),
                AttributeDescription("serial", .uuid, optional: true),
                AttributeDescription("blob", .binary, optional: true),
                AttributeDescription("config", .json, optional: true),
            ],
            relationships: [
                RelationshipDescription("readings", destination: "Reading", toMany: true, inverse: "device"),
                RelationshipDescription("tags", destination: "Tag", toMany: true, inverse: "devices"),
            ]),
        EntityDescription(
            name: "Reading",
            attributes: [
                AttributeDescription("value", .double, optional: true),
                AttributeDescription("count", .int, optional: true),
                AttributeDescription("label", .string, optional: true),
                AttributeDescription("time", .date),
                AttributeDescription("payload", .binary, optional: true),
            ],
            relationships: [
                RelationshipDescription("device", destination: "Device", inverse: "readings")
            ]),
        EntityDescription(
            name: "Tag",
            attributes: [AttributeDescription("title", .string)],
            relationships: [
                RelationshipDescription("devices", destination: "Device", toMany: true, inverse: "tags")
            ]),
    ])

    static func id(_ entity: String, _ n: Int64) -> ObjectID { ObjectID(entity: entity, number: n) }
}

/// A little object graph held in memory, for evaluating predicates with a `lookup`.
struct ObjectGraphFixture {
    var objects: [ObjectID: [String: PropertyValue]] = [:]

    func lookup(_ id: ObjectID) -> [String: PropertyValue]? { objects[id] }

    /// Evaluates `format` (bound with `arguments`) against the object `id`.
    func matches(_ format: String, _ id: ObjectID, _ arguments: [String: PropertyValue] = [:]) throws -> Bool {
        let predicate = try ObjectPredicate(format: format).binding(arguments)
        return try predicate.evaluate(
            values: objects[id]!, entity: id.entity, in: PredicateTestFixtures.model, lookup: lookup)
    }

    /// Evaluates `format` against loose values of `entity`.
    static func matches(
        _ format: String, _ values: [String: PropertyValue], entity: String = "Device",
        _ arguments: [String: PropertyValue] = [:]
    ) throws -> Bool {
        try ObjectPredicate(format: format).binding(arguments).evaluate(
            values: values, entity: entity, in: PredicateTestFixtures.model, lookup: { _ in nil })
    }
}
