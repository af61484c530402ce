import ContextBusObjectGraph
import ContextBusSupport

/// The generated struct of one entity: its identity, a property per attribute and relationship, the to-many
/// methods and a `find(…, in:)` per `uniqueBy` set.
struct EntityDeclaration {
    let entity: EntityDescription
    let model: Model
    let names: SwiftTypeNames
    /// `public` or `internal`.
    let access: String

    /// `addToReadings`, `removeFromReadings`: the methods a to-many key gets, as Core Data's code generation names
    /// them.
    static func toManyMethodNames(_ key: String) -> [String] {
        ["addTo" + SwiftIdentifier.capitalized(key), "removeFrom" + SwiftIdentifier.capitalized(key)]
    }

    private var typeName: String { names.entity(entity.name) }
    private var object: String { names.objectGraph("ManagedObject") }

    func write(to text: inout SourceText) {
        text.line("/// An object of the entity `\(entity.name)`; `managedObject` is the dynamic API underneath.")
        text.block("\(access) struct \(typeName): \(names.objectGraph("ManagedEntity")) {") { text in
            text.line("\(access) static let entityName = \"\(entity.name)\"")
            text.blank()
            text.line("\(access) let managedObject: \(object)")
            text.blank()
            text.block("\(access) init(wrapping managedObject: \(object)) {") { text in
                text.line(
                    "\(names.swift("precondition"))(managedObject.entity.name == Self.entityName, "
                        + "\"\\(managedObject.objectID) is not a \(entity.name)\")")
                text.line("self.managedObject = managedObject")
            }
            for attribute in entity.attributes {
                text.blank()
                write(attribute, to: &text)
            }
            for relationship in entity.relationships {
                text.blank()
                write(relationship, to: &text)
            }
            for keys in entity.uniqueBy {
                text.blank()
                writeFinder(keys, to: &text)
            }
        }
    }

    private func write(_ attribute: AttributeDescription, to text: inout SourceText) {
        let key = attribute.name
        let type = names.attribute(attribute.type)
        var traits = [attribute.type.rawValue]
        if attribute.isOptional { traits.append("optional") }
        if attribute.isIndexed { traits.append("indexed") }
        if let value = attribute.defaultValue, let json = try? JSONWriter().string(value.jsonValue) {
            traits.append("default \(json)")
        }
        text.line("/// `\(key)`: \(traits.joined(separator: ", ")).")
        let getter =
            attribute.isOptional
            ? "managedObject[\"\(key)\", as: \(type).self]"
            : "managedObject.requiredValue(forKey: \"\(key)\", as: \(type).self)"
        text.block("\(access) var \(SwiftIdentifier.escaped(key)): \(type)\(attribute.isOptional ? "?" : "") {") {
            text in
            text.line("get { \(getter) }")
            text.line("nonmutating set { managedObject[\"\(key)\", as: \(type).self] = newValue }")
        }
    }

    private func write(_ relationship: RelationshipDescription, to text: inout SourceText) {
        let key = relationship.name
        let destination = names.entity(relationship.destination)
        text.line(
            "/// `\(key)`: \(relationship.isToMany ? "to-many" : "to-one") `\(relationship.destination)`, inverse "
                + "`\(relationship.inverse)`, delete rule \(relationship.deleteRule.rawValue).")
        if relationship.isToMany {
            text.block("\(access) var \(SwiftIdentifier.escaped(key)): [\(destination)] {") { text in
                text.line(
                    "get { managedObject.relatedObjects(forKey: \"\(key)\").map(\(destination).init(wrapping:)) }")
                text.line(
                    "nonmutating set { managedObject.setRelatedObjects(newValue.map(\\.managedObject), "
                        + "forKey: \"\(key)\") }")
            }
            let methods = Self.toManyMethodNames(key)
            for (method, verb, preposition, call) in [
                (methods[0], "Adds", "to", "addRelatedObject"), (methods[1], "Removes", "from", "removeRelatedObject"),
            ] {
                text.blank()
                text.line(
                    "/// \(verb) `object` \(preposition) `\(key)`; its `\(relationship.inverse)` follows.")
                text.block("\(access) func \(method)(_ object: \(destination)) {") { text in
                    text.line("managedObject.\(call)(object.managedObject, forKey: \"\(key)\")")
                }
            }
        } else {
            text.block("\(access) var \(SwiftIdentifier.escaped(key)): \(destination)? {") { text in
                text.line("get { managedObject.relatedObject(forKey: \"\(key)\").map(\(destination).init(wrapping:)) }")
                text.line(
                    "nonmutating set { managedObject.setRelatedObject(newValue?.managedObject, forKey: \"\(key)\") }")
            }
        }
    }

    /// `static func find(address: String, in context: ObjectContext) throws -> Device?` for one `uniqueBy` set.
    private func writeFinder(_ keys: [String], to text: inout SourceText) {
        let contextName = keys.contains("context") ? "objectContext" : "context"
        var parameters: [String] = []
        var values: [String] = []
        for key in keys {
            let name = SwiftIdentifier.escaped(key)
            if let attribute = entity.attribute(named: key) {
                parameters.append("\(name): \(names.attribute(attribute.type))")
                values.append("\"\(key)\": \(name).propertyValue")
            } else if let relationship = entity.relationship(named: key) {
                parameters.append("\(name): \(names.entity(relationship.destination))")
                values.append("\"\(key)\": .reference(\(name).managedObject.objectID)")
            }
        }
        parameters.append("in \(contextName): \(names.objectGraph("ObjectContext"))")
        let described = keys.map { "`\($0)`" }.joined(separator: " and ")
        text.line(
            "/// The `\(entity.name)` whose \(described) \(keys.count == 1 ? "is" : "are") "
                + (keys.count == 1 ? "`\(keys[0])`" : "these") + " (unique\(keys.count == 1 ? "" : " together") by "
                + "the model), in `\(contextName)`, or `nil`.")
        text.block("\(access) static func find(\(parameters.joined(separator: ", "))) throws -> \(typeName)? {") {
            text in
            let call = "try Self.unique(matching: [\(values.joined(separator: ", "))], in: \(contextName))"
            if text.fits(call) {
                text.line(call)
            } else {
                text.line("try Self.unique(")
                text.indented { text in
                    let matching = "matching: [\(values.joined(separator: ", "))], in: \(contextName))"
                    if text.fits(matching) {
                        text.line(matching)
                    } else {
                        text.line("matching: [")
                        text.indented { text in
                            for value in values { text.line(value + ",") }
                        }
                        text.line("],")
                        text.line("in: \(contextName))")
                    }
                }
            }
        }
    }
}
