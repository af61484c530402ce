import ContextBusObjectGraph
import ContextBusSupport

/// A model a database was made with before the one it has now, as `Z_METADATA.previousVersions` keeps it (a JSON
/// array, oldest first): its version hash, the last transaction committed under it, and what the migration from
/// it changed in names, which is what reading its history rows under the current model needs
/// (`HistoryTranslation`; docs/decisions/history-across-model-versions.md).
///
/// Names are those of this model: `renamedEntities` maps an entity's name here to its name in the next model,
/// `renamedKeys` an attribute's, per entity named as here; entities and keys the next model dropped are listed as
/// removed. Anything not mentioned kept its name.
struct PreviousModelVersion: Sendable, Hashable {
    var version: String
    /// History rows up to this transaction were written under this model (or an earlier one).
    var lastTxn: Int64
    var renamedEntities: [String: String] = [:]
    var removedEntities: Set<String> = []
    var renamedKeys: [String: [String: String]] = [:]
    var removedKeys: [String: Set<String>] = [:]

    /// The `Z_METADATA` key of the list.
    static let metadataKey = "previousVersions"

    init(version: String, lastTxn: Int64) {
        self.version = version
        self.lastTxn = lastTxn
    }

    /// The stored model of `plan`, migrated after transaction `lastTxn`.
    init(plan: MigrationPlan, version: String, lastTxn: Int64) {
        self.init(version: version, lastTxn: lastTxn)
        for entity in plan.stored.entities {
            guard let new = plan.newName(ofStoredEntity: entity.name) else {
                removedEntities.insert(entity.name)
                continue
            }
            if new != entity.name { renamedEntities[entity.name] = new }
            for (newKey, oldKey) in plan.attributeOrigins[new, default: [:]] where newKey != oldKey {
                renamedKeys[entity.name, default: [:]][oldKey] = newKey
            }
            let removed = plan.removedKeys(ofStoredEntity: entity.name)
            if !removed.isEmpty { removedKeys[entity.name] = Set(removed) }
        }
    }

    /// `{"version","lastTxn","renamedEntities"?,"removedEntities"?,"renamedKeys"?,"removedKeys"?}`.
    var json: JSONValue {
        var members: [String: JSONValue] = ["version": .string(version), "lastTxn": .int(lastTxn)]
        if !renamedEntities.isEmpty {
            members["renamedEntities"] = .object(renamedEntities.mapValues(JSONValue.string))
        }
        if !removedEntities.isEmpty {
            members["removedEntities"] = .array(removedEntities.sorted().map(JSONValue.string))
        }
        if !renamedKeys.isEmpty {
            members["renamedKeys"] = .object(renamedKeys.mapValues { .object($0.mapValues(JSONValue.string)) })
        }
        if !removedKeys.isEmpty {
            members["removedKeys"] = .object(removedKeys.mapValues { .array($0.sorted().map(JSONValue.string)) })
        }
        return .object(members)
    }

    /// Reads one entry; `nil` when it is not one.
    init?(json: JSONValue) {
        guard let version = json["version"]?.stringValue, let lastTxn = json["lastTxn"]?.intValue else { return nil }
        self.init(version: version, lastTxn: lastTxn)
        func strings(_ value: JSONValue?) -> [String]? { value?.arrayValue?.compactMap(\.stringValue) }
        func names(_ value: JSONValue?) -> [String: String] {
            (value?.objectValue ?? [:]).compactMapValues(\.stringValue)
        }
        renamedEntities = names(json["renamedEntities"])
        removedEntities = Set(strings(json["removedEntities"]) ?? [])
        renamedKeys = (json["renamedKeys"]?.objectValue ?? [:]).mapValues { names($0) }
        removedKeys = (json["removedKeys"]?.objectValue ?? [:]).mapValues { Set(strings($0) ?? []) }
    }

    /// The list `text` (the metadata value) holds; empty for none.
    static func list(from text: String?) -> [PreviousModelVersion] {
        guard let text, let json = StoredJSON.parse(text), let items = json.arrayValue else { return [] }
        return items.compactMap(PreviousModelVersion.init(json:))
    }

    /// The metadata value of `list`.
    static func text(of list: [PreviousModelVersion]) -> String {
        // Names and numbers only: JSON can always hold them.
        (try? StoredJSON.writer.string(.array(list.map(\.json)))) ?? "[]"
    }
}
