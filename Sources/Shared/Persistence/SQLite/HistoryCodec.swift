import ContextBusObjectGraph
import ContextBusSupport
import Foundation

/// Serialises a `ChangeSet`'s objects for the history table and reads them back exactly.
///
/// The text is compact JSON: `{"i":[object or run…],"u":[[object,[changed keys],{previous values}]…],"d":[object…]}`
/// with `object` = `["Entity", number, version, {values}]`. Inserts are mostly written as runs
/// (`HistoryCodec+InsertRuns.swift`): consecutive inserts of one entity that hold a value for every
/// property, as one table `{"e":"Entity","k":[keys],"r":[[number,version,value…]…]}`, so that the
/// key names are written once per run rather than once per object. Rows written before runs
/// existed (objects only) read the same way. Values are written by the model's
/// types, so no tags are needed: dates as seconds since 2001 (Foundation's reference date, exact),
/// binary as base64, uuids as strings, json wrapped in a one-element array (to tell JSON `null`
/// from a missing value), to-one as the destination's number, to-many as an array of numbers.
/// Keys the model no longer has are skipped when reading, and rows written under an earlier model are read
/// through its `HistoryTranslation`. Written and read with `StoredJSON`: the
/// one JSON codec, sorted keys inside json values.
struct HistoryCodec {
    let model: Model
    /// How rows written under earlier models read under `model`.
    let translation: HistoryTranslation
    /// Each entity's property names, in model order: the columns of its insert runs.
    let insertColumns: [String: [String]]

    init(model: Model, translation: HistoryTranslation = .none) {
        self.model = model
        self.translation = translation
        var columns: [String: [String]] = [:]
        for entity in model.entities { columns[entity.name] = entity.propertyNames }
        insertColumns = columns
    }

    enum DecodingError: Error, CustomStringConvertible {
        case malformed(txn: Int64)
        var description: String {
            switch self {
            case .malformed(let txn): return "history row \(txn) is not a change set this model can read"
            }
        }
    }

    // MARK: - Writing

    /// The change set's history text, as UTF-8 bytes (written straight into a byte buffer: no
    /// intermediate strings per value).
    func encode(_ changes: ChangeSet) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64 + 160 * (changes.inserted.count + changes.updated.count + changes.deleted.count))
        JSONWriter.appendLiteral("{\"i\":[", into: &out)
        writeInserted(changes.inserted, into: &out)
        JSONWriter.appendLiteral("],\"u\":[", into: &out)
        for (i, update) in changes.updated.enumerated() {
            if i > 0 { out.append(JSONByte.comma) }
            out.append(JSONByte.openBracket)
            write(update.snapshot, into: &out)
            JSONWriter.appendLiteral(",[", into: &out)
            for (j, key) in update.changedKeys.sorted().enumerated() {
                if j > 0 { out.append(JSONByte.comma) }
                JSONWriter.appendString(key, into: &out)
            }
            JSONWriter.appendLiteral("],", into: &out)
            writeValues(update.previousValues, into: &out)
            out.append(JSONByte.closeBracket)
        }
        JSONWriter.appendLiteral("],\"d\":[", into: &out)
        for (i, snapshot) in changes.deleted.enumerated() {
            if i > 0 { out.append(JSONByte.comma) }
            write(snapshot, into: &out)
        }
        JSONWriter.appendLiteral("]}", into: &out)
        return out
    }

    func write(_ snapshot: ObjectSnapshot, into out: inout [UInt8]) {
        out.append(JSONByte.openBracket)
        JSONWriter.appendString(snapshot.id.entity, into: &out)
        out.append(JSONByte.comma)
        JSONWriter.appendInteger(snapshot.id.number ?? 0, into: &out)
        out.append(JSONByte.comma)
        JSONWriter.appendInteger(snapshot.version, into: &out)
        out.append(JSONByte.comma)
        writeValues(snapshot.values, into: &out)
        out.append(JSONByte.closeBracket)
    }

    private func writeValues(_ values: [String: PropertyValue], into out: inout [UInt8]) {
        out.append(JSONByte.openBrace)
        var first = true
        for (key, value) in values {
            if !first { out.append(JSONByte.comma) }
            first = false
            JSONWriter.appendString(key, into: &out)
            out.append(JSONByte.colon)
            write(value, into: &out)
        }
        out.append(JSONByte.closeBrace)
    }

    func write(_ value: PropertyValue, into out: inout [UInt8]) {
        switch value {
        case .null: JSONWriter.appendLiteral("null", into: &out)
        case .string(let s): JSONWriter.appendString(s, into: &out)
        case .int(let i): JSONWriter.appendInteger(i, into: &out)
        case .double(let d): StoredJSON.write(d, into: &out)
        case .bool(let b): JSONWriter.appendLiteral(b ? "true" : "false", into: &out)
        case .date(let d): StoredJSON.write(d.timeIntervalSinceReferenceDate, into: &out)
        case .binary(let data):
            out.append(JSONByte.quote)
            Base64.append(data, into: &out)
            out.append(JSONByte.quote)
        case .uuid(let u): JSONWriter.appendString(u.uuidString.lowercased(), into: &out)
        case .json(let j):
            out.append(JSONByte.openBracket)
            StoredJSON.write(j, into: &out)
            out.append(JSONByte.closeBracket)
        case .reference(let id): JSONWriter.appendInteger(id.number ?? 0, into: &out)
        case .references(let ids):
            out.append(JSONByte.openBracket)
            for (i, id) in ids.enumerated() {
                if i > 0 { out.append(JSONByte.comma) }
                JSONWriter.appendInteger(id.number ?? 0, into: &out)
            }
            out.append(JSONByte.closeBracket)
        }
    }

    // MARK: - Reading

    /// The change set of one history row, under the current model's names: a row written under an earlier model
    /// is read through `translation` (renamed entities and keys under their new names, removed ones left out, an
    /// update left with no changed key left out).
    func decode(_ text: String, txn: Int64, time: Date, author: String?) throws -> ChangeSet {
        guard case .object(let root)? = StoredJSON.parse(text),
            case .array(let inserted)? = root["i"], case .array(let updated)? = root["u"],
            case .array(let deleted)? = root["d"]
        else { throw DecodingError.malformed(txn: txn) }
        let era = translation.era(ofTxn: txn)
        var updates: [ChangeSet.Update] = []
        updates.reserveCapacity(updated.count)
        for item in updated {
            guard case .array(let parts) = item, parts.count == 3, case .array(let keys) = parts[1],
                case .object(let previous) = parts[2]
            else { throw DecodingError.malformed(txn: txn) }
            guard let found = try object(from: parts[0], era: era, txn: txn) else { continue }
            let (snapshot, entity, keyNames) = found
            var changedKeys: Set<String> = []
            for key in keys.compactMap(\.stringValue) {
                if let current = Self.currentName(of: key, in: keyNames) { changedKeys.insert(current) }
            }
            if changedKeys.isEmpty && !keys.isEmpty { continue }
            updates.append(
                ChangeSet.Update(
                    snapshot: snapshot, changedKeys: changedKeys,
                    previousValues: values(from: previous, entity: entity, keys: keyNames)))
        }
        var insertedSnapshots: [ObjectSnapshot] = []
        insertedSnapshots.reserveCapacity(inserted.count)
        for item in inserted {
            if case .object(let run) = item {
                guard appendRun(run, era: era, to: &insertedSnapshots) else { throw DecodingError.malformed(txn: txn) }
            } else if let found = try object(from: item, era: era, txn: txn) {
                insertedSnapshots.append(found.0)
            }
        }
        var deletedSnapshots: [ObjectSnapshot] = []
        deletedSnapshots.reserveCapacity(deleted.count)
        for item in deleted {
            if let found = try object(from: item, era: era, txn: txn) { deletedSnapshots.append(found.0) }
        }
        return ChangeSet(
            txn: txn, time: time, author: author, inserted: insertedSnapshots, updated: updates,
            deleted: deletedSnapshots)
    }

    /// The current name of the key `key` of a row, given its entity's translation (`nil`: none, the name stands);
    /// `nil` when the key was removed since.
    static func currentName(of key: String, in translation: HistoryTranslation.Entity?) -> String? {
        guard let translation else { return key }
        return translation.key(key)
    }

    /// The entity named `stored` in a row of `era`, under the current model: `nil` when it was removed since;
    /// its description and its keys' translation (`nil`: the keys stand).
    func entity(
        named stored: String, era: HistoryTranslation.Era?
    ) -> (entity: EntityDescription, keys: HistoryTranslation.Entity?)?? {
        let translation = era?.entity(stored)
        if case .some(.none) = translation { return .some(nil) }
        let keys = translation ?? nil
        guard let entity = model.entity(named: keys?.name ?? stored) else { return nil }
        return (entity, keys)
    }

    /// `["Entity", number, version, {values}]` read as a snapshot of the current model; `nil` when its entity was
    /// removed since.
    ///
    /// - Throws: `DecodingError.malformed` when it is not such an array or names an entity the model cannot read.
    private func object(
        from item: JSONValue, era: HistoryTranslation.Era?, txn: Int64
    ) throws -> (ObjectSnapshot, EntityDescription, HistoryTranslation.Entity?)? {
        guard case .array(let parts) = item, parts.count == 4, let name = parts[0].stringValue,
            case .int(let number) = parts[1], case .int(let version) = parts[2], case .object(let values) = parts[3]
        else { throw DecodingError.malformed(txn: txn) }
        guard let lookup = entity(named: name, era: era) else { throw DecodingError.malformed(txn: txn) }
        guard let found = lookup else { return nil }
        let (entity, keys) = found
        let snapshot = ObjectSnapshot(
            id: ObjectID(entity: entity.name, number: number), version: version,
            values: self.values(from: values, entity: entity, keys: keys))
        return (snapshot, entity, keys)
    }

    private func values(
        from members: [String: JSONValue], entity: EntityDescription, keys: HistoryTranslation.Entity?
    ) -> [String: PropertyValue] {
        var values: [String: PropertyValue] = [:]
        for (stored, json) in members {
            guard let key = Self.currentName(of: stored, in: keys) else { continue }
            if let attribute = entity.attribute(named: key) {
                values[key] = attributeValue(json, type: attribute.type)
            } else if let relationship = entity.relationship(named: key) {
                values[key] = relationshipValue(json, relationship: relationship)
            }
        }
        return values
    }

    func attributeValue(_ json: JSONValue, type: AttributeType) -> PropertyValue {
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

    func relationshipValue(_ json: JSONValue, relationship: RelationshipDescription) -> PropertyValue {
        if relationship.isToMany {
            let numbers = json.arrayValue?.compactMap(\.intValue) ?? []
            return .references(numbers.map { ObjectID(entity: relationship.destination, number: $0) })
        }
        return json.intValue.map { .reference(ObjectID(entity: relationship.destination, number: $0)) } ?? .null
    }
}
