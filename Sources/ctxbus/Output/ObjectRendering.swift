import ContextBusObjectGraph
import ContextBusWire

/// Store objects and changes as tables and lines, with the model's property order and types
/// (binary values in hex).
struct ObjectRendering: Sendable {
    /// The served model, when it could be read; without it, columns are sorted by name.
    let model: Model?

    /// One table per entity (in order of first appearance), separated by a blank line; a title
    /// line before each when there is more than one.
    func lines(for objects: [StoreObject]) -> [String] {
        var order: [String] = []
        var byEntity: [String: [StoreObject]] = [:]
        for object in objects {
            if byEntity[object.id.entity] == nil { order.append(object.id.entity) }
            byEntity[object.id.entity, default: []].append(object)
        }
        var lines: [String] = []
        for entity in order {
            if !lines.isEmpty { lines.append("") }
            if order.count > 1 { lines.append("\(entity):") }
            lines += table(for: byEntity[entity] ?? [], entity: entity).lines
        }
        return lines
    }

    /// The table of objects of one entity: `id`, `version`, then each property.
    func table(for objects: [StoreObject], entity: String) -> Table {
        let keys = columns(for: entity, objects: objects)
        let description = model?.entity(named: entity)
        let rows = objects.map { object in
            [object.id.description, String(object.version)]
                + keys.map { key in
                    guard let value = object.values[key] else { return "" }
                    return ValueText.text(value, type: description?.attribute(named: key)?.type)
                }
        }
        let numeric: Set<AttributeType> = [.int, .double]
        let alignments: [Table.Alignment] =
            [.left, .right]
            + keys.map { key in
                description?.attribute(named: key).map { numeric.contains($0.type) } == true ? .right : .left
            }
        return Table(["id", "version"] + keys, rows: rows, alignments: alignments)
    }

    /// The model's properties of `entity` in order, then any other keys the objects have, sorted.
    func columns(for entity: String, objects: [StoreObject]) -> [String] {
        let known = model?.entity(named: entity)?.propertyNames ?? []
        let extra = Set(objects.flatMap(\.values.keys)).subtracting(known).sorted()
        return known + extra
    }

    /// The lines of one `store.changed` event: one per object,
    /// `txn 12  inserted  Device/3  v1  address=AA:… name=thermo`; with to-many changes (`--to-many changes`)
    /// the members added and removed follow, `readings+=Reading/7,Reading/8 readings-=Reading/2`.
    func lines(for change: ChangedEvent) -> [String] {
        let prefix = "txn \(change.txn)" + (change.author.map { " (\($0))" } ?? "")
        var lines: [String] = []
        for object in change.inserted { lines.append(line(prefix, "inserted", object)) }
        for object in change.updated { lines.append(line(prefix, "updated ", object)) }
        for id in change.deleted { lines.append("\(prefix)  deleted   \(id)") }
        return lines
    }

    private func line(_ prefix: String, _ kind: String, _ object: StoreObject) -> String {
        let description = model?.entity(named: object.id.entity)
        let pairs = columns(for: object.id.entity, objects: [object]).compactMap { key -> String? in
            guard let value = object.values[key] else { return nil }
            return ValueText.pair(key, value, type: description?.attribute(named: key)?.type)
        }
        let memberChanges = object.toManyChanges.keys.sorted().flatMap { key -> [String] in
            guard let change = object.toManyChanges[key] else { return [] }
            return [(key + "+=", change.added), (key + "-=", change.removed)].compactMap { label, members in
                members.isEmpty ? nil : label + members.map(\.description).joined(separator: ",")
            }
        }
        return "\(prefix)  \(kind)  \(object.id)  v\(object.version)  " + (pairs + memberChanges).joined(separator: " ")
    }
}
