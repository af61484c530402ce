import ContextBusObjectGraph
import ContextBusSupport

/// Inserts in the history text as runs: consecutive inserts of one entity whose values name every
/// property of the entity, written as one table
/// `{"e":"Entity","k":["key"…],"r":[[number,version,value…]…]}` (values in `k` order), instead of
/// one `["Entity",number,version,{"key":value…}]` per object. A large save mostly inserts objects
/// of one entity with all their values (the planner fills in every attribute and to-one), so the
/// key names, the entity name and the braces are written once per run, not once per object.
///
/// Any other insert (an entity this codec's model does not know, a snapshot missing a key or
/// holding one the entity does not have) is written in the object form; readers accept both
/// forms in any mix, so rows written before runs existed read unchanged.
extension HistoryCodec {
    /// Entities wider than this are written in the object form (keys are found by a linear scan).
    static let maximumRunColumns = 32

    /// Writes the members of the `"i"` array.
    func writeInserted(_ snapshots: [ObjectSnapshot], into out: inout [UInt8]) {
        var isFirstItem = true
        var openRun: String?  // the entity of the run being written
        var columns: [String] = []
        var columnsEntity: String?
        var row: [PropertyValue] = []
        for snapshot in snapshots {
            let entity = snapshot.id.entity
            if columnsEntity != entity {
                columns = insertColumns[entity].flatMap { $0.count <= Self.maximumRunColumns ? $0 : nil } ?? []
                columnsEntity = entity
                row = Array(repeating: .null, count: columns.count)
            }
            guard !columns.isEmpty, Self.fill(&row, columns: columns, from: snapshot.values) else {
                if openRun != nil { JSONWriter.appendLiteral("]}", into: &out) }
                openRun = nil
                if !isFirstItem { out.append(JSONByte.comma) }
                isFirstItem = false
                write(snapshot, into: &out)
                continue
            }
            if openRun != entity {
                if openRun != nil { JSONWriter.appendLiteral("]}", into: &out) }
                if !isFirstItem { out.append(JSONByte.comma) }
                isFirstItem = false
                writeRunHeader(entity: entity, columns: columns, into: &out)
                openRun = entity
            } else {
                out.append(JSONByte.comma)
            }
            out.append(JSONByte.openBracket)
            JSONWriter.appendInteger(snapshot.id.number ?? 0, into: &out)
            out.append(JSONByte.comma)
            JSONWriter.appendInteger(snapshot.version, into: &out)
            for value in row {
                out.append(JSONByte.comma)
                write(value, into: &out)
            }
            out.append(JSONByte.closeBracket)
        }
        if openRun != nil { JSONWriter.appendLiteral("]}", into: &out) }
    }

    /// Puts each of `values` at its key's position in `columns`; `false` unless the keys are
    /// exactly the columns (then `row` holds every value).
    private static func fill(
        _ row: inout [PropertyValue], columns: [String], from values: [String: PropertyValue]
    ) -> Bool {
        guard values.count == columns.count else { return false }
        // Keys are distinct and as many as the (distinct) columns: each position is set once.
        for (key, value) in values {
            guard let position = columns.firstIndex(of: key) else { return false }
            row[position] = value
        }
        return true
    }

    private func writeRunHeader(entity: String, columns: [String], into out: inout [UInt8]) {
        JSONWriter.appendLiteral("{\"e\":", into: &out)
        JSONWriter.appendString(entity, into: &out)
        JSONWriter.appendLiteral(",\"k\":[", into: &out)
        for (i, column) in columns.enumerated() {
            if i > 0 { out.append(JSONByte.comma) }
            JSONWriter.appendString(column, into: &out)
        }
        JSONWriter.appendLiteral("],\"r\":[", into: &out)
    }

    /// Appends the snapshots of one run, under the current model's names (`era`: the earlier model the row was
    /// written under); `false` when the run is malformed or names an entity the model does not have. Keys the
    /// model no longer has are skipped, and so is a run of an entity removed since.
    func appendRun(
        _ run: [String: JSONValue], era: HistoryTranslation.Era? = nil, to snapshots: inout [ObjectSnapshot]
    ) -> Bool {
        guard case .string(let stored)? = run["e"], let lookup = entity(named: stored, era: era),
            case .array(let keys)? = run["k"], case .array(let rows)? = run["r"]
        else { return false }
        guard let found = lookup else { return true }
        let (entity, translation) = found
        let name = entity.name
        enum Column {
            case attribute(String, AttributeType)
            case relationship(String, RelationshipDescription)
            case skipped
        }
        var columns: [Column] = []
        columns.reserveCapacity(keys.count)
        for key in keys {
            guard case .string(let stored) = key else { return false }
            guard let key = Self.currentName(of: stored, in: translation) else {
                columns.append(.skipped)
                continue
            }
            if let attribute = entity.attribute(named: key) {
                columns.append(.attribute(key, attribute.type))
            } else if let relationship = entity.relationship(named: key) {
                columns.append(.relationship(key, relationship))
            } else {
                columns.append(.skipped)
            }
        }
        snapshots.reserveCapacity(snapshots.count + rows.count)
        for row in rows {
            guard case .array(let parts) = row, parts.count == columns.count + 2, case .int(let number) = parts[0],
                case .int(let version) = parts[1]
            else { return false }
            var values: [String: PropertyValue] = [:]
            values.reserveCapacity(columns.count)
            for (column, json) in zip(columns, parts[2...]) {
                switch column {
                case .attribute(let key, let type): values[key] = attributeValue(json, type: type)
                case .relationship(let key, let relationship):
                    values[key] = relationshipValue(json, relationship: relationship)
                case .skipped: continue
                }
            }
            snapshots.append(
                ObjectSnapshot(id: ObjectID(entity: name, number: number), version: version, values: values))
        }
        return true
    }
}
