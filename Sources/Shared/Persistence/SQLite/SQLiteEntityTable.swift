import ContextBusObjectGraph

/// How the objects of one entity are read from and written to SQLite (`SQLSchema`'s mapping),
/// with the SQL prepared once per store. Immutable.
final class SQLiteEntityTable: Sendable {
    /// A to-many relationship and the query that lists its destinations' `Z_PK`s for one owner.
    struct ToMany: Sendable {
        let relationship: RelationshipDescription
        let selectSQL: String
    }

    /// A many-to-many relationship this entity writes (the side whose rows are `Z_SOURCE`).
    struct JoinTable: Sendable {
        let relationship: RelationshipDescription
        let insertSQL: String
        let deleteSQL: String
    }

    let entity: EntityDescription
    /// The to-one relationships: foreign-key columns after the attribute columns.
    let toOne: [RelationshipDescription]
    let toMany: [ToMany]
    let joinTables: [JoinTable]
    /// `DELETE FROM <join> WHERE <my column> = ?` for every many-to-many of this entity.
    let joinCleanupSQL: [String]
    /// Quoted columns: `Z_PK`, `Z_VERSION`, attributes, to-one foreign keys.
    let columns: [String]
    /// The names of the attributes and to-one relationships, in column order after `Z_VERSION`.
    let dataColumnNames: [String]
    let columnList: String
    let selectSQL: String
    let insertSQL: String
    /// The positions in `dataColumnNames` of the columns that have an index: indexed attributes and to-one
    /// foreign keys.
    let indexedDataPositions: [Int]
    /// `UPDATE`s that set `Z_VERSION`, every column without an index, and the indexed columns of one set of
    /// them: entry `mask` sets `indexedDataPositions[i]` where bit `i` is set (`updateSQL(changing:)`).
    let updateSQLs: [String]
    let deleteSQL: String
    /// Per `uniqueBy` set, in the model's order: `SELECT "Z_PK" … WHERE` each of its columns `= ?`, in order.
    let uniqueLookupSQL: [String]
    /// A row's values before its columns are read: every attribute and to-one relationship, `null`.
    let rowTemplate: [String: PropertyValue]
    /// The position in `rowTemplate` of each name of `dataColumnNames`, in order. A row is a copy of the template
    /// with each value set at its position: a copy keeps the template's layout, so its positions are the
    /// template's, and reading a row hashes no key.
    let rowPositions: [Dictionary<String, PropertyValue>.Index]

    /// The most indexed columns for which each set of them has its own `UPDATE` (2^6 statements); a table with
    /// more sets all of its columns in every update.
    static let mostIndexedColumnsForNarrowUpdates = 6

    init(entity: EntityDescription, schema: SQLSchema) {
        self.entity = entity
        let q = SQLSchema.quote
        let table = q(schema.table(for: entity.name))
        toOne = entity.relationships.filter { !$0.isToMany }
        var toMany: [ToMany] = []
        var joinTables: [JoinTable] = []
        var cleanup: [String] = []
        for relationship in entity.relationships where relationship.isToMany {
            switch schema.storage(ofRelationship: relationship.name, in: entity.name) {
            case .inverseForeignKey(let destination, let column):
                toMany.append(
                    ToMany(
                        relationship: relationship,
                        selectSQL: "SELECT \"Z_PK\" FROM \(q(destination)) WHERE \(q(column)) = ? ORDER BY \"Z_PK\""))
            case .joinTable(let joinTable, let source, let target):
                toMany.append(
                    ToMany(
                        relationship: relationship,
                        selectSQL:
                            "SELECT \(q(target)) FROM \(q(joinTable)) WHERE \(q(source)) = ? ORDER BY \(q(target))"))
                cleanup.append("DELETE FROM \(q(joinTable)) WHERE \(q(source)) = ?")
                if source == "Z_SOURCE" {
                    joinTables.append(
                        JoinTable(
                            relationship: relationship,
                            insertSQL:
                                "INSERT OR IGNORE INTO \(q(joinTable)) (\"Z_SOURCE\", \"Z_TARGET\") VALUES (?, ?)",
                            deleteSQL: "DELETE FROM \(q(joinTable)) WHERE \"Z_SOURCE\" = ? AND \"Z_TARGET\" = ?"))
                }
            case .foreignKey:
                preconditionFailure("a to-many relationship is never a foreign key of its own table")
            }
        }
        self.toMany = toMany
        self.joinTables = joinTables
        joinCleanupSQL = cleanup
        let dataColumns = entity.attributes.map { q(schema.column(for: $0.name)) } + toOne.map { q($0.name) }
        columns = ["\"Z_PK\"", "\"Z_VERSION\""] + dataColumns
        let names = entity.attributes.map(\.name) + toOne.map(\.name)
        dataColumnNames = names
        let template = Dictionary(names.map { ($0, PropertyValue.null) }, uniquingKeysWith: { first, _ in first })
        rowTemplate = template
        rowPositions = names.map { template.index(forKey: $0)! }
        columnList = columns.joined(separator: ", ")
        selectSQL = "SELECT \(columnList) FROM \(table) WHERE \"Z_PK\" = ?"
        let placeholders = Array(repeating: "?", count: dataColumns.count + 2).joined(separator: ", ")
        insertSQL = "INSERT INTO \(table) (\(columnList)) VALUES (\(placeholders))"
        let uniqueKeys = Set(entity.uniqueBy.joined())
        let indexed = names.indices.filter { position in
            position >= entity.attributes.count || entity.attributes[position].isIndexed
                || uniqueKeys.contains(names[position])
        }
        indexedDataPositions = indexed
        // Parameters are numbered as in a full update (`?1` the version, `?2`… the data columns in order, then
        // the key), so every variant binds alike; a column a variant leaves out leaves its number unused.
        let keyParameter = dataColumns.count + 2
        func update(settingIndexed mask: Int) -> String {
            let set = dataColumns.indices.filter { position in
                guard let bit = indexed.firstIndex(of: position) else { return true }
                return mask & (1 << bit) != 0
            }
            return "UPDATE \(table) SET \"Z_VERSION\" = ?1"
                + set.map { ", \(dataColumns[$0]) = ?\($0 + 2)" }.joined()
                + " WHERE \"Z_PK\" = ?\(keyParameter)"
        }
        if indexed.count <= Self.mostIndexedColumnsForNarrowUpdates {
            updateSQLs = (0..<(1 << indexed.count)).map(update(settingIndexed:))
        } else {
            updateSQLs = [update(settingIndexed: (1 << indexed.count) - 1)]
        }
        deleteSQL = "DELETE FROM \(table) WHERE \"Z_PK\" = ?"
        uniqueLookupSQL = entity.uniqueBy.map { keys in
            let conditions = keys.map { key in
                "\(dataColumns[names.firstIndex(of: key)!]) = ?"
            }
            return "SELECT \"Z_PK\" FROM \(table) WHERE \(conditions.joined(separator: " AND ")) LIMIT 1"
        }
    }

    /// The object whose values for the keys of `key` (one `uniqueBy` set) are those values, if any.
    func object(withKey key: [String: PropertyValue], on connection: SQLiteConnection) throws(SQLiteError) -> ObjectID?
    {
        // A set's names are distinct, so one of the key's size whose every name it holds is the key's set.
        guard
            let set = entity.uniqueBy.firstIndex(where: { keys in
                keys.count == key.count && keys.allSatisfy { key[$0] != nil }
            })
        else { return nil }
        let statement = try connection.statement(uniqueLookupSQL[set])
        defer { statement.reset() }
        for (i, name) in entity.uniqueBy[set].enumerated() { try statement.bind(key[name]!, at: Int32(i + 1)) }
        guard try statement.step(), !statement.isNull(at: 0) else { return nil }
        return ObjectID(entity: entity.name, number: statement.int64(at: 0))
    }

    /// The columns prefixed with a table alias, for joins.
    func qualifiedColumnList(alias: String) -> String {
        columns.map { "\(alias).\($0)" }.joined(separator: ", ")
    }

    // MARK: - Reading

    /// The snapshot of object `number`, or `nil` when there is no such row.
    func snapshot(number: Int64, on connection: SQLiteConnection) throws(SQLiteError) -> ObjectSnapshot? {
        guard let snapshot = try rowSnapshot(number: number, on: connection) else { return nil }
        return try withToMany(snapshot, on: connection)
    }

    /// The snapshot of object `number` without its to-many relationships, or `nil` when there is
    /// no such row.
    func rowSnapshot(number: Int64, on connection: SQLiteConnection) throws(SQLiteError) -> ObjectSnapshot? {
        let statement = try connection.statement(selectSQL)
        try statement.bind(number, at: 1)
        guard try statement.step() else {
            statement.reset()
            return nil
        }
        let snapshot = row(from: statement, column: 0)
        statement.reset()
        return snapshot
    }

    /// The members of to-many `relationship` of object `number`, sorted.
    func members(
        of number: Int64, relationship: String, on connection: SQLiteConnection
    ) throws(SQLiteError) -> [ObjectID] {
        guard let item = toMany.first(where: { $0.relationship.name == relationship }) else { return [] }
        return try members(of: number, item, on: connection)
    }

    private func members(
        of number: Int64, _ item: ToMany, on connection: SQLiteConnection
    ) throws(SQLiteError)
        -> [ObjectID]
    {
        let statement = try connection.statement(item.selectSQL)
        try statement.bind(number, at: 1)
        var targets: [ObjectID] = []
        while try statement.step() {
            targets.append(ObjectID(entity: item.relationship.destination, number: statement.int64(at: 0)))
        }
        statement.reset()
        return targets
    }

    /// The snapshot in the current row of `statement`, whose columns start at `column` in
    /// `columnList` order; to-many relationships are not read yet (see `withToMany`).
    func row(from statement: SQLiteStatement, column: Int32) -> ObjectSnapshot {
        let number = statement.int64(at: column)
        var values = rowTemplate
        var index = column + 2
        var positions = rowPositions.makeIterator()
        for attribute in entity.attributes {
            values.values[positions.next()!] = statement.propertyValue(at: index, type: attribute.type)
            index += 1
        }
        for relationship in toOne {
            values.values[positions.next()!] = statement.reference(at: index, entity: relationship.destination)
            index += 1
        }
        return ObjectSnapshot(
            id: ObjectID(entity: entity.name, number: number), version: statement.int64(at: column + 1),
            values: values)
    }

    /// `snapshot` with its to-many relationships read.
    func withToMany(_ snapshot: ObjectSnapshot, on connection: SQLiteConnection) throws(SQLiteError) -> ObjectSnapshot {
        guard !toMany.isEmpty else { return snapshot }
        var snapshot = snapshot
        for item in toMany {
            snapshot.values[item.relationship.name] = .references(
                try members(of: snapshot.id.number!, item, on: connection))
        }
        return snapshot
    }

    // MARK: - Writing

    /// Inserts the rows of `snapshots` (all of this entity) with one prepared statement.
    func insert(_ snapshots: ArraySlice<ObjectSnapshot>, on connection: SQLiteConnection) throws(SQLiteError) {
        let statement = try connection.statement(insertSQL)
        for snapshot in snapshots {
            try statement.bind(snapshot.id.number!, at: 1)
            try statement.bind(snapshot.version, at: 2)
            try bindData(of: snapshot, to: statement, from: 3)
            try statement.run()
        }
        guard !joinTables.isEmpty else { return }
        for snapshot in snapshots {
            for join in joinTables {
                guard case .references(let targets)? = snapshot.values[join.relationship.name] else { continue }
                try writeJoinRows(join, owner: snapshot.id, added: targets, removed: [], on: connection)
            }
        }
    }

    /// Writes an updated row; many-to-many rows from `toManyDeltas` (members added and removed).
    func update(
        _ update: ChangeSet.Update, toManyDeltas: [String: ToManyDelta]?, on connection: SQLiteConnection
    ) throws(SQLiteError) {
        let snapshot = update.snapshot
        let statement = try connection.statement(updateSQL(changing: update.changedKeys))
        try statement.bind(snapshot.version, at: 1)
        let next = try bindData(of: snapshot, to: statement, from: 2)
        try statement.bind(snapshot.id.number!, at: next)
        try statement.run()
        guard let toManyDeltas else { return }
        for join in joinTables {
            guard let delta = toManyDeltas[join.relationship.name] else { continue }
            try writeJoinRows(
                join, owner: snapshot.id, added: delta.added.sorted(), removed: delta.removed.sorted(),
                on: connection)
        }
    }

    /// The `UPDATE` for a change of `changedKeys`: it sets the indexed columns among them and no other indexed
    /// column. SQLite rewrites an index entry whenever its column is set, even to the value it had, and so
    /// writes that index's page to the WAL: an update of `name` alone would also write `address`'s index.
    ///
    /// A column left out keeps its committed value, so `changedKeys` must name every attribute and to-one
    /// relationship whose new value differs from the committed row's: `ChangeSetPlanner.makePlan` compares
    /// them all.
    func updateSQL(changing changedKeys: Set<String>) -> String {
        guard updateSQLs.count > 1 else { return updateSQLs[0] }
        var mask = 0
        for (bit, position) in indexedDataPositions.enumerated() where changedKeys.contains(dataColumnNames[position]) {
            mask |= 1 << bit
        }
        return updateSQLs[mask]
    }

    func delete(_ snapshot: ObjectSnapshot, on connection: SQLiteConnection) throws(SQLiteError) {
        try connection.run(deleteSQL, [.int(snapshot.id.number!)])
        for sql in joinCleanupSQL { try connection.run(sql, [.int(snapshot.id.number!)]) }
    }

    /// Binds the attribute and foreign-key columns; returns the next parameter index.
    @discardableResult
    private func bindData(
        of snapshot: ObjectSnapshot, to statement: SQLiteStatement, from first: Int32
    ) throws(SQLiteError) -> Int32 {
        // A narrow table binds the snapshot's values as they come, finding each one's column by
        // name among a few, rather than hashing every column name into the values.
        if dataColumnNames.count <= 16 {
            var bound: UInt32 = 0
            for (key, value) in snapshot.values {
                guard let position = dataColumnNames.firstIndex(of: key) else { continue }  // a to-many
                try statement.bind(value, at: first + Int32(position))
                bound |= 1 << UInt32(position)
            }
            for position in dataColumnNames.indices where bound & (1 << UInt32(position)) == 0 {
                try statement.bindNull(at: first + Int32(position))
            }
            return first + Int32(dataColumnNames.count)
        }
        var index = first
        for attribute in entity.attributes {
            try statement.bind(snapshot.values[attribute.name] ?? .null, at: index)
            index += 1
        }
        for relationship in toOne {
            try statement.bind(snapshot.values[relationship.name] ?? .null, at: index)
            index += 1
        }
        return index
    }

    private func writeJoinRows(
        _ join: JoinTable, owner: ObjectID, added: [ObjectID], removed: [ObjectID], on connection: SQLiteConnection
    ) throws(SQLiteError) {
        for target in removed { try connection.run(join.deleteSQL, [.int(owner.number!), .int(target.number!)]) }
        for target in added { try connection.run(join.insertSQL, [.int(owner.number!), .int(target.number!)]) }
    }
}
