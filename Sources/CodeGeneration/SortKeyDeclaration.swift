import ContextBusObjectGraph

/// `extension SortKey where Entity == Device`: a static key per attribute and a function per to-one
/// relationship, so that `sortedBy: [.name, .device(.address).descending]` reads as the model.
struct SortKeyDeclaration {
    let entity: EntityDescription
    let names: SwiftTypeNames
    /// `public` or `internal`.
    let access: String

    func write(to text: inout SourceText) {
        let typeName = names.entity(entity.name)
        text.block("extension \(names.objectGraph("SortKey")) where Entity == \(typeName) {") { text in
            var first = true
            for attribute in entity.attributes {
                if !first { text.blank() }
                first = false
                text.line("/// By `\(attribute.name)`, ascending (`.\(attribute.name).descending` for the other way).")
                text.line(
                    "\(access) static var \(SwiftIdentifier.escaped(attribute.name)): Self { Self(\"\(attribute.name)\") }"
                )
            }
            for relationship in entity.relationships where !relationship.isToMany {
                if !first { text.blank() }
                first = false
                let destination = names.entity(relationship.destination)
                text.line("/// By a key of the `\(relationship.destination)` that `\(relationship.name)` points at.")
                text.block(
                    "\(access) static func \(SwiftIdentifier.escaped(relationship.name))(_ key: "
                        + "\(names.objectGraph("SortKey"))<\(destination)>) -> Self {"
                ) { text in
                    text.line("Self(through: \"\(relationship.name)\", key)")
                }
            }
        }
    }
}
