import ContextBusObjectGraph
import ContextBusSupport
import Foundation

/// Creates the tables of a model in a new database, checks the model of an existing one, and migrates one made
/// with another model in place (`SQLiteMigration`), after an online backup of the file, or refuses it.
///
/// Besides one table per entity and one per many-to-many pair (`SQLSchema`), a database holds:
/// `Z_METADATA` (the model's version hash and JSON, a floor for the last transaction number, the models it was
/// made with before: `previousVersions`), `Z_PRIMARYKEY` (per entity, the highest `Z_PK` ever handed out, so IDs
/// are never reused) and `Z_HISTORY` (one row per committed transaction).
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

    /// What `prepare` found and did.
    struct Outcome {
        /// The models the file was made with before, oldest first (`Z_METADATA.previousVersions`).
        var previousVersions: [PreviousModelVersion]
        /// The migration it ran, if the file was made with another model.
        var migration: MigrationPlan?
        /// Where the file was copied before the migration.
        var backupPath: String?
    }

    /// How `prepare` migrates (`SQLiteStore.Configuration`'s migration settings).
    struct MigrationOptions {
        /// Told each point the migration passes (`SQLiteMigration`'s phases, and `backup` between the backup's
        /// steps); tests stop the process there.
        var progress: (String) -> Void = { _ in }
        /// Pages the backup copies per step.
        var backupPagesPerStep: Int32 = 1024
    }

    /// Makes the database at `path` fit `model`; run on the writer connection before anything else.
    ///
    /// A database made with another model is migrated in the same transaction, once its file has been copied with
    /// SQLite's online backup API to `<path>.before-<stored version hash>` (the write lock held: the copy is the
    /// state the migration starts from).
    ///
    /// - Throws: `StoreError.migrationRefused` naming each difference that cannot be migrated (nothing in the file
    ///   changes), `StoreError.modelMismatch` when the stored model cannot be read, `StoreError.unavailable` when
    ///   the backup cannot be written, or a `SQLiteError`.
    static func prepare(
        _ connection: SQLiteConnection, for model: Model, path: String, options: MigrationOptions = MigrationOptions()
    ) throws -> Outcome {
        try connection.execute("BEGIN IMMEDIATE")
        do {
            try connection.execute(
                "CREATE TABLE IF NOT EXISTS \"\(metadataTable)\" (\"Z_KEY\" TEXT PRIMARY KEY, \"Z_VALUE\")")
            var outcome = Outcome(previousVersions: [])
            if let stored = try metadata("modelHash", on: connection) {
                if stored != model.versionHash {
                    var plan = try migrationPlan(on: connection, storedHash: stored, to: model)
                    try SQLiteMigration.refuseCollisions(in: &plan, on: connection)
                    guard plan.canMigrate else {
                        throw StoreError.migrationRefused(
                            stored: stored, expected: model.versionHash, differences: plan.refusals.map(\.description))
                    }
                    options.progress("planned")
                    outcome.backupPath = try backUp(path, storedHash: stored, options: options)
                    options.progress("backed up")
                    try SQLiteMigration(plan: plan, connection: connection, progress: options.progress).run()
                    let lastTxn = try connection.integer(lastTransactionSQL) ?? 0
                    let previous =
                        PreviousModelVersion.list(from: try metadata(PreviousModelVersion.metadataKey, on: connection))
                        + [PreviousModelVersion(plan: plan, version: stored, lastTxn: lastTxn)]
                    try setMetadata("modelHash", .string(model.versionHash), on: connection)
                    try setMetadata("model", .string(modelText(model)), on: connection)
                    try setMetadata(
                        PreviousModelVersion.metadataKey, .string(PreviousModelVersion.text(of: previous)),
                        on: connection)
                    options.progress("recorded")
                    outcome.migration = plan
                }
            } else {
                try create(model, on: connection)
            }
            outcome.previousVersions = PreviousModelVersion.list(
                from: try metadata(PreviousModelVersion.metadataKey, on: connection))
            try connection.execute("COMMIT")
            if outcome.migration != nil { options.progress("committed") }
            return outcome
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    /// The plan from the model stored in the database to `model`, without its data's refusals.
    ///
    /// - Throws: `StoreError.modelMismatch` when the stored model cannot be read.
    static func migrationPlan(
        on connection: SQLiteConnection, storedHash: String, to model: Model
    ) throws -> MigrationPlan {
        guard let text = try metadata("model", on: connection), let json = StoredJSON.parse(text),
            let stored = try? Model(json: json)
        else { throw StoreError.modelMismatch(stored: storedHash, expected: model.versionHash) }
        return MigrationPlan(from: stored, to: model)
    }

    /// Copies the database to `<path>.before-<storedHash>` (replacing a copy of that name, which an interrupted
    /// migration from the same model may have left: it held the same data), after removing the partial copies
    /// an interrupted backup may have left.
    private static func backUp(_ path: String, storedHash: String, options: MigrationOptions) throws -> String {
        let url = URL(fileURLWithPath: path)
        let destination = path + ".before-" + storedHash
        let directory = url.deletingLastPathComponent().path
        let partialPrefix = "." + (destination as NSString).lastPathComponent + ".partial-"
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        where name.hasPrefix(partialPrefix) {
            FileSystem.removeFile(atPath: directory + "/" + name)
        }
        do {
            _ = try SQLiteStore.backup(
                ofDatabaseAt: url, to: destination, pagesPerStep: options.backupPagesPerStep,
                shouldContinue: {
                    options.progress("backup")
                    return true
                })
        } catch {
            throw StoreError.unavailable(
                "cannot back the database up before migrating it (nothing was changed): \(error)")
        }
        return destination
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
        try connection.execute(
            """
            CREATE TABLE "\(primaryKeyTable)" ("Z_ENTITY" TEXT PRIMARY KEY, "Z_MAX" INTEGER NOT NULL);
            CREATE TABLE "\(historyTable)" ("Z_TXN" INTEGER PRIMARY KEY, "Z_TIME" REAL NOT NULL, "Z_AUTHOR" TEXT,
                "Z_CHANGES" TEXT NOT NULL);
            """)
        // Each join table's name (lowercased, as SQLite compares names) and the pair it stores.
        var joinTables: [String: String] = [:]
        for entity in model.entities {
            try createTable(for: entity, schema: schema, joinTables: &joinTables, on: connection)
        }
        try setMetadata("modelHash", .string(model.versionHash), on: connection)
        try setMetadata("model", .string(modelText(model)), on: connection)
        try setMetadata("lastTxn", .int(0), on: connection)
    }

    /// The columns of an entity's table: `Z_PK`, `Z_VERSION`, the attributes, the to-one relationships.
    static func columnDefinitions(of entity: EntityDescription, schema: SQLSchema) -> [String] {
        let q = SQLSchema.quote
        var columns = ["\"Z_PK\" INTEGER PRIMARY KEY", "\"Z_VERSION\" INTEGER NOT NULL"]
        columns += entity.attributes.map { "\(q(schema.column(for: $0.name))) \(columnType($0.type))" }
        columns += entity.relationships.filter { !$0.isToMany }.map { "\(q($0.name)) INTEGER" }
        return columns
    }

    /// Creates an entity's table, its indexes, the join tables of its many-to-many relationships (once per
    /// pair: `joinTables` holds those made so far) and its `Z_PRIMARYKEY` row (kept when there is one: the
    /// numbers of an entity of that name removed before go on).
    static func createTable(
        for entity: EntityDescription, schema: SQLSchema, joinTables: inout [String: String],
        on connection: SQLiteConnection
    ) throws {
        let q = SQLSchema.quote
        let table = schema.table(for: entity.name)
        try connection.execute(
            "CREATE TABLE \(q(table)) (\(columnDefinitions(of: entity, schema: schema).joined(separator: ", ")))")
        // An attribute that is a unique key by itself is indexed by its unique index alone.
        for attribute in entity.attributes where attribute.isIndexed && !entity.uniqueBy.contains([attribute.name]) {
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
                    guard owner == pair else { throw joinTableClash(owner, pair, joinTable) }
                    break
                }
                joinTables[joinTable.lowercased()] = pair
                try connection.execute(joinTableSQL(named: joinTable))
                try createIndex(on: joinTable, column: "Z_TARGET", connection: connection)
            default:
                break
            }
        }
        try connection.run(
            "INSERT OR IGNORE INTO \"\(primaryKeyTable)\" (\"Z_ENTITY\", \"Z_MAX\") VALUES (?, 0)",
            [.string(entity.name)])
    }

    /// The `CREATE TABLE` of a join table.
    static func joinTableSQL(named name: String, ifNotExists: Bool = false) -> String {
        """
        CREATE TABLE \(ifNotExists ? "IF NOT EXISTS " : "")\(SQLSchema.quote(name)) ("Z_SOURCE" INTEGER NOT NULL, "Z_TARGET" INTEGER NOT NULL,
            PRIMARY KEY ("Z_SOURCE", "Z_TARGET")) WITHOUT ROWID
        """
    }

    /// Throws when two many-to-many pairs of `model` would share a join table (as `create` would).
    static func checkJoinTables(of model: Model) throws {
        let schema = SQLSchema(model: model)
        var joinTables: [String: String] = [:]
        for entity in model.entities {
            for relationship in entity.relationships {
                guard
                    case .joinTable(let joinTable, _, _) = schema.storage(
                        ofRelationship: relationship.name, in: entity.name)
                else { continue }
                let pair = [
                    "\(entity.name).\(relationship.name)", "\(relationship.destination).\(relationship.inverse)",
                ].sorted().joined(separator: " and ")
                if let owner = joinTables[joinTable.lowercased()], owner != pair {
                    throw joinTableClash(owner, pair, joinTable)
                }
                joinTables[joinTable.lowercased()] = pair
            }
        }
    }

    private static func joinTableClash(_ owner: String, _ pair: String, _ table: String) -> SQLiteError {
        SQLiteError(
            code: 1,  // SQLITE_ERROR
            message: "the many-to-many relationships \(owner) and \(pair) would share the join "
                + "table \(table); rename one of them")
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
}
