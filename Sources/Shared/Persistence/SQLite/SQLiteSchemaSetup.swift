import ContextBusObjectGraph
import ContextBusSupport

/// Creates the tables of a model in a new database, checks the model of an existing one, and
/// migrates in place when the only change is added optional attributes.
///
/// Besides one table per entity and one per many-to-many pair (`SQLSchema`), a database holds:
/// `Z_METADATA` (the model's version hash and JSON, a floor for the last transaction number),
/// `Z_PRIMARYKEY` (per entity, the highest `Z_PK` ever handed out, so IDs are never reused) and
/// `Z_HISTORY` (one row per committed transaction).
enum SQLiteSchemaSetup {
    static let metadataTable = "Z_METADATA"
    static let primaryKeyTable = "Z_PRIMARYKEY"
    static let historyTable = "Z_HISTORY"

    /// The declared column type (and so the affinity) of an attribute type.
    static func columnType(_ type: AttributeType) -> String {
        switch type {
        case .string, .uuid, .json: return "TEXT"
        case .int, .bool: return "INTEGER"
        case .double, .date: return "REAL"
        case .binary: return "BLOB"
        }
    }

    /// Makes the database fit `model`; run on the writer connection before anything else.
    ///
    /// - Throws: `StoreError.modelMismatch` when the database was made with a model that cannot
    ///   be migrated in place, or a `SQLiteError`.
    static func prepare(_ connection: SQLiteConnection, for model: Model) throws {
        try connection.execute("BEGIN IMMEDIATE")
        do {
            try connection.execute(
                "CREATE TABLE IF NOT EXISTS \"\(metadataTable)\" (\"Z_KEY\" TEXT PRIMARY KEY, \"Z_VALUE\")")
            if let stored = try metadata("modelHash", on: connection) {
                if stored != model.versionHash { try migrate(connection, from: stored, to: model) }
            } else {
                try create(model, on: connection)
            }
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    /// The last committed transaction: the newest history row, or `Z_METADATA.lastTxn` when that
    /// is higher. Every commit writes a history row and pruning keeps the newest ones, so the
    /// history alone knows the number; the metadata value is written only when history is pruned
    /// and when the store closes (a floor for files whose history was emptied by other means, and
    /// the number an older version of the store reads), not in every commit: one WAL frame less.
    static let lastTransactionSQL = """
        SELECT MAX(IFNULL((SELECT MAX("Z_TXN") FROM "\(historyTable)"), 0),
            IFNULL((SELECT CAST("Z_VALUE" AS INTEGER) FROM "\(metadataTable)" WHERE "Z_KEY" = 'lastTxn'), 0))
        """

    /// Records `txn` as `Z_METADATA.lastTxn` (see `lastTransactionSQL`).
    static let setLastTransactionSQL = "UPDATE \"\(metadataTable)\" SET \"Z_VALUE\" = ? WHERE \"Z_KEY\" = 'lastTxn'"

    static func metadata(_ key: String, on connection: SQLiteConnection) throws(SQLiteError) -> String? {
        try connection.text("SELECT \"Z_VALUE\" FROM \"\(metadataTable)\" WHERE \"Z_KEY\" = ?", [.string(key)])
    }

    static func setMetadata(_ key: String, _ value: PropertyValue, on connection: SQLiteConnection) throws(SQLiteError)
    {
        try connection.run(
            "INSERT OR REPLACE INTO \"\(metadataTable)\" (\"Z_KEY\", \"Z_VALUE\") VALUES (?, ?)", [.string(key), value])
    }

    private static func create(_ model: Model, on connection: SQLiteConnection) throws {
        let schema = SQLSchema(model: model)
        let q = SQLSchema.quote
        try connection.execute(
            """
            CREATE TABLE "\(primaryKeyTable)" ("Z_ENTITY" TEXT PRIMARY KEY, "Z_MAX" INTEGER NOT NULL);
            CREATE TABLE "\(historyTable)" ("Z_TXN" INTEGER PRIMARY KEY, "Z_TIME" REAL NOT NULL, "Z_AUTHOR" TEXT,
                "Z_CHANGES" TEXT NOT NULL);
            """)
        // Each join table's name (lowercased, as SQLite compares names) and the pair it stores.
        var joinTables: [String: String] = [:]
        for entity in model.entities {
            let table = schema.table(for: entity.name)
            var columns = ["\"Z_PK\" INTEGER PRIMARY KEY", "\"Z_VERSION\" INTEGER NOT NULL"]
            columns += entity.attributes.map { "\(q(schema.column(for: $0.name))) \(columnType($0.type))" }
            columns += entity.relationships.filter { !$0.isToMany }.map { "\(q($0.name)) INTEGER" }
            try connection.execute("CREATE TABLE \(q(table)) (\(columns.joined(separator: ", ")))")
            // An attribute that is a unique key by itself is indexed by its unique index alone.
            for attribute in entity.attributes where attribute.isIndexed && !entity.uniqueBy.contains([attribute.name])
            {
                try createIndex(on: table, column: schema.column(for: attribute.name), connection: connection)
            }
            for keys in entity.uniqueBy { try createUniqueIndex(keys, of: entity, schema: schema, on: connection) }
            for relationship in entity.relationships {
                switch schema.storage(ofRelationship: relationship.name, in: entity.name) {
                case .foreignKey(let column):
                    try createIndex(on: table, column: column, connection: connection)
                case .joinTable(let joinTable, _, _):
                    let pair = [
                        "\(entity.name).\(relationship.name)", "\(relationship.destination).\(relationship.inverse)",
                    ].sorted().joined(separator: " and ")
                    if let owner = joinTables[joinTable.lowercased()] {
                        // The other side of a pair names the same table; a different pair must not share it.
                        guard owner == pair else {
                            throw SQLiteError(
                                code: 1,  // SQLITE_ERROR
                                message: "the many-to-many relationships \(owner) and \(pair) would share the join "
                                    + "table \(joinTable); rename one of them")
                        }
                        break
                    }
                    joinTables[joinTable.lowercased()] = pair
                    try connection.execute(
                        """
                        CREATE TABLE \(q(joinTable)) ("Z_SOURCE" INTEGER NOT NULL, "Z_TARGET" INTEGER NOT NULL,
                            PRIMARY KEY ("Z_SOURCE", "Z_TARGET")) WITHOUT ROWID
                        """)
                    try createIndex(on: joinTable, column: "Z_TARGET", connection: connection)
                default:
                    break
                }
            }
            try connection.run(
                "INSERT INTO \"\(primaryKeyTable)\" (\"Z_ENTITY\", \"Z_MAX\") VALUES (?, 0)", [.string(entity.name)])
        }
        try setMetadata("modelHash", .string(model.versionHash), on: connection)
        try setMetadata("model", .string(modelText(model)), on: connection)
        try setMetadata("lastTxn", .int(0), on: connection)
    }

    /// The model's JSON, as `Z_METADATA` keeps it.
    private static func modelText(_ model: Model) -> String {
        // `Model` refuses a default it could not write (NaN, an infinity), so this cannot fail.
        guard let text = try? StoredJSON.writer.string(model.jsonValue) else {
            preconditionFailure("model \(model.versionHash) has a value JSON cannot hold")
        }
        return text
    }

    private static func createIndex(
        on table: String, column: String, connection: SQLiteConnection
    )
        throws(SQLiteError)
    {
        let q = SQLSchema.quote
        try connection.execute("CREATE INDEX IF NOT EXISTS \(q("Z_\(table)_\(column)")) ON \(q(table)) (\(q(column)))")
    }

    /// The name of the unique index of one `uniqueBy` set.
    private static func uniqueIndexName(_ keys: [String], table: String) -> String {
        "Z_\(table)_UNIQUE_\(keys.joined(separator: "_"))"
    }

    /// Creates the unique index of `keys` (a `uniqueBy` set of `entity`); SQLite's `NULL`s never collide, as the
    /// protocol says.
    ///
    /// - Throws: `StoreError.unavailable` naming the objects that already share a key (a set added to a model whose
    ///   database has such objects), or a `SQLiteError`.
    private static func createUniqueIndex(
        _ keys: [String], of entity: EntityDescription, schema: SQLSchema, on connection: SQLiteConnection
    ) throws {
        let q = SQLSchema.quote
        let table = schema.table(for: entity.name)
        let columns = keys.map { key in q(entity.attribute(named: key) != nil ? schema.column(for: key) : key) }
        let present = columns.map { "\($0) IS NOT NULL" }.joined(separator: " AND ")
        let duplicates = try connection.text(
            "SELECT GROUP_CONCAT(\"Z_PK\") FROM \(q(table)) WHERE \(present) GROUP BY \(columns.joined(separator: ", "))"
                + " HAVING COUNT(*) > 1 LIMIT 1")
        if let duplicates {
            let ids = duplicates.split(separator: ",").map { "\(entity.name)/\($0)" }
            throw StoreError.unavailable(
                "cannot make \(entity.name) unique by \(keys.joined(separator: ", ")): "
                    + "\(ids.joined(separator: ", ")) have the same \(keys.joined(separator: ", "))")
        }
        let index = q(uniqueIndexName(keys, table: table))
        try connection.execute(
            "CREATE UNIQUE INDEX IF NOT EXISTS \(index) ON \(q(table)) (\(columns.joined(separator: ", ")))")
    }

    // MARK: - Migration

    /// Adds the optional attributes `model` has and the stored model lacks; anything else is a mismatch.
    private static func migrate(_ connection: SQLiteConnection, from storedHash: String, to model: Model) throws {
        let mismatch = StoreError.modelMismatch(stored: storedHash, expected: model.versionHash)
        guard let text = try metadata("model", on: connection), let json = StoredJSON.parse(text),
            let stored = try? Model(json: json)
        else { throw mismatch }
        guard Set(stored.entities.map(\.name)) == Set(model.entities.map(\.name)) else { throw mismatch }
        var added: [(entity: String, attribute: AttributeDescription)] = []
        for entity in model.entities {
            let old = stored.entity(named: entity.name)!
            guard Set(old.relationships) == Set(entity.relationships) else { throw mismatch }
            for attribute in old.attributes where entity.attribute(named: attribute.name) != attribute {
                throw mismatch
            }
            for attribute in entity.attributes where old.attribute(named: attribute.name) == nil {
                guard attribute.isOptional else { throw mismatch }
                added.append((entity.name, attribute))
            }
        }
        let schema = SQLSchema(model: model)
        let q = SQLSchema.quote
        for (entity, attribute) in added {
            let table = schema.table(for: entity)
            let column = schema.column(for: attribute.name)
            try connection.execute("ALTER TABLE \(q(table)) ADD COLUMN \(q(column)) \(columnType(attribute.type))")
            if let value = attribute.defaultValue, !value.isNull {
                try connection.run("UPDATE \(q(table)) SET \(q(column)) = ?", [value])
            }
            if attribute.isIndexed { try createIndex(on: table, column: column, connection: connection) }
        }
        // Unique keys: a set the new model adds gets its index (refused when objects already share a key), one it
        // drops loses it.
        for entity in model.entities {
            let old = stored.entity(named: entity.name)!
            let table = schema.table(for: entity.name)
            for keys in old.uniqueBy where !entity.uniqueBy.contains(keys) {
                try connection.execute("DROP INDEX IF EXISTS \(q(uniqueIndexName(keys, table: table)))")
            }
            for keys in entity.uniqueBy where !old.uniqueBy.contains(keys) {
                try createUniqueIndex(keys, of: entity, schema: schema, on: connection)
                if keys.count == 1, entity.attribute(named: keys[0]) != nil {
                    // Its unique index now indexes the column (as in a new database).
                    let column = schema.column(for: keys[0])
                    try connection.execute("DROP INDEX IF EXISTS \(q("Z_\(table)_\(column)"))")
                }
            }
            for keys in old.uniqueBy where !entity.uniqueBy.contains(keys) && keys.count == 1 {
                if let attribute = entity.attribute(named: keys[0]), attribute.isIndexed {
                    try createIndex(on: table, column: schema.column(for: keys[0]), connection: connection)
                }
            }
        }
        try setMetadata("modelHash", .string(model.versionHash), on: connection)
        try setMetadata("model", .string(modelText(model)), on: connection)
    }
}
