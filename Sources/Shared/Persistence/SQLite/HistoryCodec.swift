import Foundation

/// Serialises a `ChangeSet`'s objects for the history table and reads them back exactly.
///
/// The text is compact JSON: `{"i":[object…],"u":[[object,[changed keys],{previous values}]…],"d":[object…]}`
/// with `object` = `["Entity", number, version, {values}]`. Values are written by the model's
/// types, so no tags are needed: dates as seconds since 2001 (Foundation's reference date, exact),
/// binary as base64, uuids as strings, json wrapped in a one-element array (to tell JSON `null`
/// from a missing value), to-one as the destination's number, to-many as an array of numbers.
/// Keys the model no longer has are skipped when reading.
struct HistoryCodec {
    let model: Model

    enum DecodingError: Error, CustomStringConvertible {
        case malformed(txn: Int64)
        var description: String {
            switch self {
            case .malformed(let txn): return "history row \(txn) is not a change set this model can read"
            }
        }
    }

    // MARK: - Writing

    func encode(_ changes: ChangeSet) -> String {
        var text = ""
        text.reserveCapacity(64 + 160 * (changes.inserted.count + changes.updated.count + changes.deleted.count))
        text += "{\"i\":["
        for (i, snapshot) in changes.inserted.enumerated() {
            if i > 0 { text += "," }
            write(snapshot, into: &text)
        }
        text += "],\"u\":["
        for (i, update) in changes.updated.enumerated() {
            if i > 0 { text += "," }
            text += "["
            write(update.snapshot, into: &text)
            text += ",["
            for (j, key) in update.changedKeys.sorted().enumerated() {
                if j > 0 { text += "," }
                JSONText.writeString(key, into: &text)
            }
            text += "],"
            writeValues(update.previousValues, entity: update.snapshot.id.entity, into: &text)
            text += "]"
        }
        text += "],\"d\":["
        for (i, snapshot) in changes.deleted.enumerated() {
            if i > 0 { text += "," }
            write(snapshot, into: &text)
        }
        text += "]}"
        return text
    }

    private func write(_ snapshot: ObjectSnapshot, into text: inout String) {
        text += "["
        JSONText.writeString(snapshot.id.entity, into: &text)
        text += ",\(snapshot.id.number ?? 0),\(snapshot.version),"
        writeValues(snapshot.values, entity: snapshot.id.entity, into: &text)
        text += "]"
    }

    private func writeValues(_ values: [String: PropertyValue], entity: String, into text: inout String) {
        text += "{"
        var first = true
        for (key, value) in values {
            if !first { text += "," }
            first = false
            JSONText.writeString(key, into: &text)
            text += ":"
            write(value, into: &text)
        }
        text += "}"
    }

    private func write(_ value: PropertyValue, into text: inout String) {
        switch value {
        case .null: text += "null"
        case .string(let s): JSONText.writeString(s, into: &text)
        case .int(let i): text += String(i)
        case .double(let d): JSONText.writeDouble(d, into: &text)
        case .bool(let b): text += b ? "true" : "false"
        case .date(let d): JSONText.writeDouble(d.timeIntervalSinceReferenceDate, into: &text)
        case .binary(let data): JSONText.writeString(data.base64EncodedString(), into: &text)
        case .uuid(let u): JSONText.writeString(u.uuidString.lowercased(), into: &text)
        case .json(let j):
            text += "["
            JSONText.write(j, into: &text)
            text += "]"
        case .reference(let id): text += String(id.number ?? 0)
        case .references(let ids):
            text += "["
            for (i, id) in ids.enumerated() {
                if i > 0 { text += "," }
                text += String(id.number ?? 0)
            }
            text += "]"
        }
    }

    // MARK: - Reading

    func decode(_ text: String, txn: Int64, time: Date, author: String?) throws -> ChangeSet {
        guard case .object(let root)? = JSONText.parse(text),
            case .array(let inserted)? = root["i"], case .array(let updated)? = root["u"],
            case .array(let deleted)? = root["d"]
        else { throw DecodingError.malformed(txn: txn) }
        func snapshots(_ items: [JSONValue]) throws -> [ObjectSnapshot] {
            try items.map { item in
                guard let snapshot = snapshot(from: item) else { throw DecodingError.malformed(txn: txn) }
                return snapshot
            }
        }
        let updates = try updated.map { item -> ChangeSet.Update in
            guard case .array(let parts) = item, parts.count == 3, let snapshot = snapshot(from: parts[0]),
                case .array(let keys) = parts[1], case .object(let previous) = parts[2],
                let entity = model.entity(named: snapshot.id.entity)
            else { throw DecodingError.malformed(txn: txn) }
            return ChangeSet.Update(
                snapshot: snapshot, changedKeys: Set(keys.compactMap(\.stringValue)),
                previousValues: values(from: previous, entity: entity))
        }
        return ChangeSet(
            txn: txn, time: time, author: author, inserted: try snapshots(inserted), updated: updates,
            deleted: try snapshots(deleted))
    }

    private func snapshot(from item: JSONValue) -> ObjectSnapshot? {
        guard case .array(let parts) = item, parts.count == 4, let name = parts[0].stringValue,
            let entity = model.entity(named: name), case .int(let number) = parts[1], case .int(let version) = parts[2],
            case .object(let values) = parts[3]
        else { return nil }
        return ObjectSnapshot(
            id: ObjectID(entity: name, number: number), version: version,
            values: self.values(from: values, entity: entity))
    }

    private func values(from members: [String: JSONValue], entity: EntityDescription) -> [String: PropertyValue] {
        var values: [String: PropertyValue] = [:]
        for (key, json) in members {
            if let attribute = entity.attribute(named: key) {
                values[key] = attributeValue(json, type: attribute.type)
            } else if let relationship = entity.relationship(named: key) {
                values[key] = relationshipValue(json, relationship: relationship)
            }
        }
        return values
    }

    private func attributeValue(_ json: JSONValue, type: AttributeType) -> PropertyValue {
        if json.isNull { return .null }
        switch type {
        case .string: return json.stringValue.map(PropertyValue.string) ?? .null
        case .int: return json.intValue.map(PropertyValue.int) ?? .null
        case .double: return json.doubleValue.map(PropertyValue.double) ?? .null
        case .bool: return json.boolValue.map(PropertyValue.bool) ?? .null
        case .date:
            return json.doubleValue.map { .date(Date(timeIntervalSinceReferenceDate: $0)) } ?? .null
        case .binary: return json.stringValue.flatMap { Data(base64Encoded: $0) }.map(PropertyValue.binary) ?? .null
        case .uuid: return json.stringValue.flatMap(UUID.init(uuidString:)).map(PropertyValue.uuid) ?? .null
        case .json:
            guard case .array(let wrapped) = json, wrapped.count == 1 else { return .null }
            return .json(wrapped[0])
        }
    }

    private func relationshipValue(_ json: JSONValue, relationship: RelationshipDescription) -> PropertyValue {
        if relationship.isToMany {
            let numbers = json.arrayValue?.compactMap(\.intValue) ?? []
            return .references(numbers.map { ObjectID(entity: relationship.destination, number: $0) })
        }
        return json.intValue.map { .reference(ObjectID(entity: relationship.destination, number: $0)) } ?? .null
    }
}
