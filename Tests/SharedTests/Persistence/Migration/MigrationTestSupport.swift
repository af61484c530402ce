import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSQLite

/// A copy of the sensors fixture to migrate, and what it held before: every object and the whole history, read
/// with the fixture's model from a second copy (so the migrated copy is the committed file, untouched).
struct MigrationCase {
    let directory: URL
    let url: URL
    let before: [ObjectID: ObjectSnapshot]
    let historyBefore: [ChangeSet]

    init() throws {
        directory = try TestStore.makeDirectory()
        url = try MigrationFixtures.copySensors(into: directory)
        let reference = try MigrationFixtures.copySensors(into: directory, as: "reference.sqlite")
        let store = try SQLiteStore(url: reference, model: MigrationFixtures.sensors)
        before = try store.everything()
        historyBefore = try store.history(since: 0, limit: 100)
        store.close()
    }

    func cleanUp() {
        try? FileManager.default.removeItem(at: directory)
    }

    /// The fixture's model changed by `change`.
    static func model(_ change: (inout [EntityDescription]) -> Void) throws -> Model {
        var entities = MigrationFixtures.sensors.entities
        change(&entities)
        return try Model(entities: entities)
    }

    /// Opens the copy with `model` (migrating it), runs `body`, closes it.
    func migrate<T>(to model: Model, _ body: (SQLiteStore) throws -> T) throws -> T {
        let store = try SQLiteStore(url: url, model: model)
        defer { store.close() }
        return try body(store)
    }

    /// The objects before, each through `transform` (`nil`: expected gone), keyed by their IDs after.
    func expected(_ transform: (ObjectSnapshot) -> ObjectSnapshot?) -> [ObjectID: ObjectSnapshot] {
        var result: [ObjectID: ObjectSnapshot] = [:]
        for snapshot in before.values {
            if let changed = transform(snapshot) { result[changed.id] = changed }
        }
        return result
    }

    /// Checks every object of `store` against `expected`, object by object.
    func expectObjects(
        of store: SQLiteStore, _ expected: [ObjectID: ObjectSnapshot], sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let after = try store.everything()
        expectEqual(Set(after.keys), Set(expected.keys), sourceLocation: sourceLocation)
        for (id, snapshot) in expected.sorted(by: { $0.key < $1.key }) {
            expectEqual(after[id], snapshot, "\(id)", sourceLocation: sourceLocation)
        }
    }

    /// The backup the migration from the fixture's model writes.
    var backupPath: String { url.path + ".before-" + MigrationFixtures.sensors.versionHash }
}

extension ObjectSnapshot {
    /// This snapshot under another entity name (references to renamed entities renamed too), keys renamed and
    /// removed, and values changed by `values`.
    func migrated(
        entities: [String: String] = [:], keys: [String: String] = [:], removing removed: Set<String> = [],
        _ values: (inout [String: PropertyValue]) -> Void = { _ in }
    ) -> ObjectSnapshot {
        func renamed(_ id: ObjectID) -> ObjectID {
            ObjectID(entity: entities[id.entity] ?? id.entity, number: id.number!)
        }
        var result: [String: PropertyValue] = [:]
        for (key, value) in self.values where !removed.contains(key) {
            switch value {
            case .reference(let id): result[keys[key] ?? key] = .reference(renamed(id))
            case .references(let ids): result[keys[key] ?? key] = .references(ids.map(renamed))
            default: result[keys[key] ?? key] = value
            }
        }
        values(&result)
        return ObjectSnapshot(id: renamed(id), version: version, values: result)
    }
}

/// The shape of a database's schema, names of indexes left out: each table with its columns (name and declared
/// type, sorted by name: `ADD COLUMN` appends where a new table lists attributes first), each index as its table,
/// columns and uniqueness. A migrated database has the shape a new database of its model has.
enum SchemaShape {
    static func of(_ url: URL) throws -> [String] {
        let connection = try SQLiteConnection(path: url.path, readOnly: true, busyTimeoutMilliseconds: 1_000)
        defer { connection.close() }
        var lines: [String] = []
        let tables = try connection.uncachedStatement(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        var names: [String] = []
        while try tables.step() { names.append(tables.text(at: 0)) }
        for table in names {
            let columns = try connection.uncachedStatement("SELECT name, type, pk FROM pragma_table_info(?)")
            try columns.bind(table, at: 1)
            var list: [String] = []
            while try columns.step() {
                list.append("\(columns.text(at: 0)) \(columns.text(at: 1))\(columns.int64(at: 2) > 0 ? " key" : "")")
            }
            lines.append("table \(table): \(list.sorted().joined(separator: ", "))")
            let indexes = try connection.uncachedStatement(
                "SELECT name, \"unique\", origin FROM pragma_index_list(?)")
            try indexes.bind(table, at: 1)
            var found: [String] = []
            while try indexes.step() {
                let info = try connection.uncachedStatement("SELECT name FROM pragma_index_info(?) ORDER BY seqno")
                try info.bind(indexes.text(at: 0), at: 1)
                var columnNames: [String] = []
                while try info.step() { columnNames.append(info.text(at: 0)) }
                found.append(
                    "index on \(table) (\(columnNames.joined(separator: ", ")))"
                        + (indexes.int64(at: 1) != 0 ? " unique" : "") + " \(indexes.text(at: 2))")
            }
            lines += found.sorted()
        }
        return lines
    }

    /// The shape of a new database of `model`.
    static func ofNewDatabase(of model: Model) throws -> [String] {
        let directory = try TestStore.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("new.sqlite")
        try SQLiteStore(url: url, model: model).close()
        return try of(url)
    }
}

/// Checks that the database at `url` has the schema a new database of `model` has.
func expectSchemaOfANewDatabase(
    at url: URL, of model: Model, sourceLocation: SourceLocation = #_sourceLocation
) throws {
    expectEqual(try SchemaShape.of(url), try SchemaShape.ofNewDatabase(of: model), sourceLocation: sourceLocation)
}
