import ContextBusObjectGraph
import ContextBusSupport
import Foundation

/// Makes a database of the stored model a database of the new one, in place, inside the caller's transaction
/// (`SQLiteSchemaSetup.prepare` holds it from `BEGIN IMMEDIATE` to `COMMIT`): a crash at any point leaves the file
/// as it was, and nothing is seen before the commit.
///
/// The work, in this order, each phase announced to `progress` (tests stop the process at each one):
///
/// 1. `dropped`: tables of removed entities and join tables of removed many-to-many pairs are dropped.
/// 2. `renamed`: renamed entities' tables (and join tables whose names follow them) are renamed, through
///    temporary names so that names may move in any order; `Z_PRIMARYKEY` follows.
/// 3. `table <Entity>`, per entity that keeps objects: with `ALTER TABLE` (`RENAME COLUMN`, `DROP COLUMN` once
///    the indexes on the column are dropped, `ADD COLUMN`, with a `DEFAULT` for an attribute added with one, so
///    that existing rows take it without being rewritten) and `UPDATE`s (the nulls of an attribute made
///    required); or, when a column's declared type changes (`int` widened to `double`), with SQLite's table
///    rebuild (https://www.sqlite.org/lang_altertable.html, "Making Other Kinds Of Table Schema Changes": a new
///    table, `INSERT … SELECT`, `DROP`, `RENAME`; the store declares no foreign keys, triggers or views).
/// 4. `created`: tables of added entities, join tables of added pairs (and rebuilt ones whose two columns swap,
///    when a rename changes which side names the table).
/// 5. `indexes`: every table's indexes made what a new database of the model has: compared by table, columns
///    and uniqueness (an index keeps its name across renames), missing ones created (a `uniqueBy` set's unique
///    index included; `refuseCollisions` has checked that none of the live objects collide).
struct SQLiteMigration {
    let plan: MigrationPlan
    let connection: SQLiteConnection
    let progress: (String) -> Void
    private let storedSchema: SQLSchema
    private let schema: SQLSchema
    private let q = SQLSchema.quote

    init(plan: MigrationPlan, connection: SQLiteConnection, progress: @escaping (String) -> Void) {
        self.plan = plan
        self.connection = connection
        self.progress = progress
        storedSchema = SQLSchema(model: plan.stored)
        schema = SQLSchema(model: plan.target)
    }

    // MARK: - Refusals only the data shows

    /// Adds to `plan` a refusal for each `uniqueBy` set it adds that live objects already collide on, naming them
    /// (at most `listedGroups` groups). Read only.
    static func refuseCollisions(in plan: inout MigrationPlan, on connection: SQLiteConnection) throws {
        let listedGroups = 10
        let migration = SQLiteMigration(plan: plan, connection: connection, progress: { _ in })
        for step in plan.steps {
            guard case .uniqueByAdded(let keys) = step.change, let origin = plan.entityOrigins[step.entity],
                let entity = plan.target.entity(named: step.entity)
            else { continue }
            var expressions: [String] = []
            var bindings: [PropertyValue] = []
            for key in keys {
                if let attribute = entity.attribute(named: key) {
                    let (sql, values) = migration.storedValue(of: attribute, in: entity)
                    expressions.append(sql)
                    bindings += values
                } else if let relationship = entity.relationship(named: key),
                    plan.isKept(relationship: relationship, of: entity)
                {
                    expressions.append(SQLSchema.quote(relationship.name))
                } else {
                    expressions.append("NULL")
                }
            }
            let present = expressions.map { "(\($0)) IS NOT NULL" }.joined(separator: " AND ")
            let statement = try connection.uncachedStatement(
                "SELECT GROUP_CONCAT(\"Z_PK\") FROM \(SQLSchema.quote(origin)) WHERE \(present) GROUP BY "
                    + "\(expressions.joined(separator: ", ")) HAVING COUNT(*) > 1")
            for (i, value) in (bindings + bindings).enumerated() { try statement.bind(value, at: Int32(i + 1)) }
            var groups: [[Int64]] = []
            while try statement.step() {
                groups.append(statement.text(at: 0).split(separator: ",").compactMap { Int64($0) }.sorted())
            }
            guard !groups.isEmpty else { continue }
            groups.sort { $0.lexicographicallyPrecedes($1) }
            plan.refuse(
                MigrationStep(
                    entity: step.entity,
                    change: .refused(
                        .uniqueKeyCollisions(
                            keys: keys, groups: Array(groups.prefix(listedGroups)),
                            more: max(0, groups.count - listedGroups)))))
        }
    }

    /// The SQL of `attribute`'s value after the migration, over the stored entity's table (its stored names), and
    /// the values it binds: the stored column (read as a double when widened, its nulls as the default when made
    /// required), the default of an added attribute, or `NULL`.
    func storedValue(of attribute: AttributeDescription, in entity: EntityDescription) -> (String, [PropertyValue]) {
        guard let origin = plan.attributeOrigins[entity.name]?[attribute.name],
            let storedEntity = plan.entityOrigins[entity.name].flatMap(plan.stored.entity(named:)),
            let stored = storedEntity.attribute(named: origin)
        else {
            guard let value = attribute.defaultValue, !value.isNull else { return ("NULL", []) }
            return ("?", [value])
        }
        var column = q(storedSchema.column(for: origin))
        if stored.type == .int && attribute.type == .double { column = "CAST(\(column) AS REAL)" }
        if stored.isOptional && !attribute.isOptional, let value = attribute.defaultValue, !value.isNull {
            return ("COALESCE(\(column), ?)", [value])
        }
        return (column, [])
    }

    // MARK: - Running

    func run() throws {
        try SQLiteSchemaSetup.checkJoinTables(of: plan.target)
        let pairs = try storedPairs()
        try dropRemoved(pairs: pairs)
        progress("dropped")
        try renameTables(pairs: pairs)
        progress("renamed")
        for entity in plan.target.entities where plan.entityOrigins[entity.name] != nil {
            try migrateTable(of: entity)
            progress("table \(entity.name)")
        }
        try createAdded(pairs: pairs)
        progress("created")
        for entity in plan.target.entities {
            try reconcileIndexes(on: schema.table(for: entity.name), wanted: Self.indexes(of: entity, schema: schema))
        }
        for table in joinTables(of: plan.target, schema: schema) {
            try reconcileIndexes(on: table, wanted: [IndexShape(table: table, columns: ["Z_TARGET"], isUnique: false)])
        }
        progress("indexes")
    }

    /// A many-to-many pair of the stored model: its join table, and the new name of the side that names it
    /// (`nil` when the pair is not kept).
    private struct StoredPair {
        var table: String
        var entity: String
        var key: String
        var keptAs: (entity: String, table: String, swapped: Bool)?
    }

    private func storedPairs() throws -> [StoredPair] {
        var pairs: [StoredPair] = []
        for entity in plan.stored.entities {
            for relationship in entity.relationships where relationship.isToMany {
                guard
                    case .joinTable(let table, let source, _) = storedSchema.storage(
                        ofRelationship: relationship.name, in: entity.name), source == "Z_SOURCE"
                else { continue }
                var pair = StoredPair(table: table, entity: entity.name, key: relationship.name)
                if let newName = plan.newName(ofStoredEntity: entity.name),
                    let newEntity = plan.target.entity(named: newName),
                    let kept = newEntity.relationship(named: relationship.name),
                    plan.isKept(relationship: kept, of: newEntity),
                    case .joinTable(let newTable, let newSource, _) = schema.storage(
                        ofRelationship: kept.name, in: newName)
                {
                    pair.keptAs = (newName, newTable, newSource != "Z_SOURCE")
                }
                pairs.append(pair)
            }
        }
        return pairs
    }

    private func dropRemoved(pairs: [StoredPair]) throws {
        for entity in plan.stored.entities where plan.newName(ofStoredEntity: entity.name) == nil {
            try connection.execute("DROP TABLE IF EXISTS \(q(storedSchema.table(for: entity.name)))")
        }
        for pair in pairs where pair.keptAs == nil {
            try connection.execute("DROP TABLE IF EXISTS \(q(pair.table))")
        }
    }

    /// Renames through temporary names, so that a table may take a name another one gives up.
    private func renameTables(pairs: [StoredPair]) throws {
        var moves: [(from: String, to: String)] = []
        for (new, old) in plan.entityOrigins where new != old {
            moves.append((storedSchema.table(for: old), schema.table(for: new)))
        }
        for pair in pairs {
            guard let kept = pair.keptAs, !kept.swapped, kept.table != pair.table else { continue }
            moves.append((pair.table, kept.table))
        }
        for (i, move) in moves.enumerated() {
            try connection.execute("ALTER TABLE \(q(move.from)) RENAME TO \(q("Z_MIGRATING_\(i)"))")
        }
        for (i, move) in moves.enumerated() {
            try connection.execute("ALTER TABLE \(q("Z_MIGRATING_\(i)")) RENAME TO \(q(move.to))")
        }
        // Numbers go on where they were: an ID is never handed out twice, under any name.
        let counters = SQLSchema.quote(SQLiteSchemaSetup.primaryKeyTable)
        for (new, old) in plan.entityOrigins where new != old {
            let highest =
                try connection.integer(
                    "SELECT \"Z_MAX\" FROM \(counters) WHERE \"Z_ENTITY\" = ?", [.string(old)]) ?? 0
            try connection.run("DELETE FROM \(counters) WHERE \"Z_ENTITY\" = ?", [.string(old)])
            try connection.run(
                "INSERT INTO \(counters) (\"Z_ENTITY\", \"Z_MAX\") VALUES (?, ?) "
                    + "ON CONFLICT (\"Z_ENTITY\") DO UPDATE SET \"Z_MAX\" = MAX(\"Z_MAX\", excluded.\"Z_MAX\")",
                [.string(new), .int(highest)])
        }
    }

    private func migrateTable(of entity: EntityDescription) throws {
        guard let origin = plan.entityOrigins[entity.name], let stored = plan.stored.entity(named: origin) else {
            return
        }
        let origins = plan.attributeOrigins[entity.name] ?? [:]
        let widens = entity.attributes.contains { attribute in
            origins[attribute.name].flatMap(stored.attribute(named:)).map { $0.type != attribute.type } ?? false
        }
        if widens {
            try rebuildTable(of: entity)
            return
        }
        let table = q(schema.table(for: entity.name))
        for attribute in entity.attributes {
            guard let old = origins[attribute.name], old != attribute.name else { continue }
            try connection.execute(
                "ALTER TABLE \(table) RENAME COLUMN \(q(storedSchema.column(for: old))) TO "
                    + q(schema.column(for: attribute.name)))
        }
        // SQLite drops no column an index uses: the indexes the new model has no use for go first.
        try reconcileIndexes(
            on: schema.table(for: entity.name), wanted: Self.indexes(of: entity, schema: schema), creating: false)
        for key in plan.removedKeys(ofStoredEntity: origin) {
            let hasColumn =
                stored.attribute(named: key) != nil || stored.relationship(named: key).map { !$0.isToMany } ?? false
            if hasColumn { try connection.execute("ALTER TABLE \(table) DROP COLUMN \(q(key))") }
        }
        for attribute in entity.attributes where origins[attribute.name] == nil {
            try addColumn(for: attribute, to: table)
        }
        for relationship in entity.relationships
        where !relationship.isToMany && !plan.isKept(relationship: relationship, of: entity) {
            try connection.execute("ALTER TABLE \(table) ADD COLUMN \(q(relationship.name)) INTEGER")
        }
        for attribute in entity.attributes {
            guard let old = origins[attribute.name].flatMap(stored.attribute(named:)), old.isOptional,
                !attribute.isOptional, let value = attribute.defaultValue, !value.isNull
            else { continue }
            let column = q(schema.column(for: attribute.name))
            try connection.run("UPDATE \(table) SET \(column) = ? WHERE \(column) IS NULL", [value])
        }
    }

    /// An added attribute's column; existing rows take its default (if any) without being rewritten when the
    /// default can be written as an SQL literal that reads back exactly, else through an `UPDATE`.
    private func addColumn(for attribute: AttributeDescription, to table: String) throws {
        let definition = "\(q(schema.column(for: attribute.name))) \(SQLiteSchemaSetup.columnType(attribute.type))"
        guard let value = attribute.defaultValue, !value.isNull else {
            try connection.execute("ALTER TABLE \(table) ADD COLUMN \(definition)")
            return
        }
        if let literal = try exactLiteral(value) {
            try connection.execute("ALTER TABLE \(table) ADD COLUMN \(definition) DEFAULT \(literal)")
        } else {
            try connection.execute("ALTER TABLE \(table) ADD COLUMN \(definition)")
            try connection.run("UPDATE \(table) SET \(q(schema.column(for: attribute.name))) = ?", [value])
        }
    }

    /// `value` as an SQL literal of its stored form (`SQLiteStatement+PropertyValue`), when SQLite reads the
    /// literal back as exactly the value a statement binds.
    private func exactLiteral(_ value: PropertyValue) throws -> String? {
        func quoted(_ text: String) -> String? {
            text.utf8.contains(0) ? nil : "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
        }
        let literal: String?
        switch value {
        case .string(let text): literal = quoted(text)
        case .int(let number): literal = "\(number)"
        case .double(let number): literal = number.isFinite ? "\(number)" : nil
        case .bool(let flag): literal = flag ? "1" : "0"
        case .date(let date): literal = date.timeIntervalSince1970.isFinite ? "\(date.timeIntervalSince1970)" : nil
        case .binary(let data): literal = "X'" + data.map { String(format: "%02x", $0) }.joined() + "'"
        case .uuid(let uuid): literal = quoted(uuid.uuidString.lowercased())
        case .json(let json):
            var bytes: [UInt8] = []
            StoredJSON.write(json, into: &bytes)
            literal = quoted(String(decoding: bytes, as: UTF8.self))
        case .null, .reference, .references: literal = nil
        }
        guard let literal else { return nil }
        let statement = try connection.uncachedStatement("SELECT typeof(\(literal)) = typeof(?1) AND \(literal) IS ?1")
        try statement.bind(value, at: 1)
        guard try statement.step() else { return nil }
        return statement.int64(at: 0) == 1 ? literal : nil
    }

    /// SQLite's table rebuild: the new table under a temporary name, the rows copied with their values as the new
    /// model has them, the old table dropped (its indexes with it) and the new one renamed. The indexes are made
    /// in the last phase.
    private func rebuildTable(of entity: EntityDescription) throws {
        let table = q(schema.table(for: entity.name))
        let temporary = q("Z_MIGRATING_REBUILD")
        try connection.execute(
            "CREATE TABLE \(temporary) (\(SQLiteSchemaSetup.columnDefinitions(of: entity, schema: schema).joined(separator: ", ")))"
        )
        var columns = ["\"Z_PK\"", "\"Z_VERSION\""]
        var values = ["\"Z_PK\"", "\"Z_VERSION\""]
        var bindings: [PropertyValue] = []
        for attribute in entity.attributes {
            columns.append(q(schema.column(for: attribute.name)))
            let (sql, bound) = storedValue(of: attribute, in: entity)
            values.append(sql)
            bindings += bound
        }
        for relationship in entity.relationships where !relationship.isToMany {
            columns.append(q(relationship.name))
            values.append(plan.isKept(relationship: relationship, of: entity) ? q(relationship.name) : "NULL")
        }
        let copy = try connection.uncachedStatement(
            "INSERT INTO \(temporary) (\(columns.joined(separator: ", "))) SELECT \(values.joined(separator: ", ")) FROM \(table)"
        )
        for (i, value) in bindings.enumerated() { try copy.bind(value, at: Int32(i + 1)) }
        try copy.run()
        try connection.execute("DROP TABLE \(table)")
        try connection.execute("ALTER TABLE \(temporary) RENAME TO \(table)")
    }

    private func createAdded(pairs: [StoredPair]) throws {
        var made: [String: String] = [:]
        for entity in plan.target.entities where plan.entityOrigins[entity.name] == nil {
            try SQLiteSchemaSetup.createTable(for: entity, schema: schema, joinTables: &made, on: connection)
        }
        // Pairs kept whose names now put the other side first: the same rows, the two columns swapped.
        for pair in pairs {
            guard let kept = pair.keptAs, kept.swapped else { continue }
            let temporary = q("Z_MIGRATING_REBUILD")
            try connection.execute(SQLiteSchemaSetup.joinTableSQL(named: "Z_MIGRATING_REBUILD"))
            try connection.execute(
                "INSERT INTO \(temporary) (\"Z_SOURCE\", \"Z_TARGET\") SELECT \"Z_TARGET\", \"Z_SOURCE\" FROM \(q(pair.table))"
            )
            try connection.execute("DROP TABLE \(q(pair.table))")
            try connection.execute("ALTER TABLE \(temporary) RENAME TO \(q(kept.table))")
        }
        // Pairs added between entities that were there before.
        for table in joinTables(of: plan.target, schema: schema) {
            try connection.execute(SQLiteSchemaSetup.joinTableSQL(named: table, ifNotExists: true))
        }
    }

    /// The join tables of `model`.
    private func joinTables(of model: Model, schema: SQLSchema) -> [String] {
        var tables: [String] = []
        for entity in model.entities {
            for relationship in entity.relationships where relationship.isToMany {
                if case .joinTable(let table, let source, _) = schema.storage(
                    ofRelationship: relationship.name, in: entity.name), source == "Z_SOURCE"
                {
                    tables.append(table)
                }
            }
        }
        return tables
    }

    // MARK: - Indexes

    /// An index as compared: its table, columns in order, and whether it is unique.
    struct IndexShape: Hashable {
        var table: String
        var columns: [String]
        var isUnique: Bool
    }

    /// The indexes a new database of the model has on `entity`'s table (`SQLiteSchemaSetup.createTable`), with
    /// the names it gives them.
    static func indexes(of entity: EntityDescription, schema: SQLSchema) -> [IndexShape] {
        let table = schema.table(for: entity.name)
        var shapes: [IndexShape] = []
        for attribute in entity.attributes where attribute.isIndexed && !entity.uniqueBy.contains([attribute.name]) {
            shapes.append(IndexShape(table: table, columns: [schema.column(for: attribute.name)], isUnique: false))
        }
        for keys in entity.uniqueBy {
            let columns = keys.map { entity.attribute(named: $0) != nil ? schema.column(for: $0) : $0 }
            shapes.append(IndexShape(table: table, columns: columns, isUnique: true))
        }
        for relationship in entity.relationships where !relationship.isToMany {
            shapes.append(IndexShape(table: table, columns: [relationship.name], isUnique: false))
        }
        return shapes
    }

    /// Drops the indexes on `table` that are not `wanted` (the ones the store made: SQLite's own for primary
    /// keys are left alone), then creates the wanted ones missing (unless `creating` is false).
    private func reconcileIndexes(on table: String, wanted: [IndexShape], creating: Bool = true) throws {
        let list = try connection.uncachedStatement(
            "SELECT name, \"unique\" FROM pragma_index_list(?) WHERE origin = 'c'")
        try list.bind(table, at: 1)
        var present: [(name: String, shape: IndexShape)] = []
        while try list.step() {
            present.append((list.text(at: 0), IndexShape(table: table, columns: [], isUnique: list.int64(at: 1) != 0)))
        }
        for i in present.indices {
            let info = try connection.uncachedStatement("SELECT name FROM pragma_index_info(?) ORDER BY seqno")
            try info.bind(present[i].name, at: 1)
            while try info.step() { present[i].shape.columns.append(info.text(at: 0)) }
        }
        let wantedShapes = Set(wanted)
        for index in present where !wantedShapes.contains(index.shape) {
            try connection.execute("DROP INDEX \(q(index.name))")
        }
        guard creating else { return }
        let have = Set(present.map(\.shape))
        for shape in wanted where !have.contains(shape) {
            let name = try freeIndexName(
                shape.isUnique
                    ? "Z_\(table)_UNIQUE_\(shape.columns.joined(separator: "_"))" : "Z_\(table)_\(shape.columns[0])")
            try connection.execute(
                "CREATE \(shape.isUnique ? "UNIQUE " : "")INDEX \(q(name)) ON \(q(table)) "
                    + "(\(shape.columns.map(q).joined(separator: ", ")))")
        }
    }

    /// `name`, or `name_2`, `name_3`… when another index already has it (index names are per database, and a
    /// renamed table's indexes keep theirs).
    private func freeIndexName(_ name: String) throws -> String {
        var candidate = name
        var n = 1
        while try connection.integer(
            "SELECT COUNT(*) FROM sqlite_master WHERE name = ? COLLATE NOCASE", [.string(candidate)]) ?? 0 > 0
        {
            n += 1
            candidate = "\(name)_\(n)"
        }
        return candidate
    }
}
