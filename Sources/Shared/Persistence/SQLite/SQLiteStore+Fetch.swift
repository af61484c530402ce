import ContextBusObjectGraph

extension SQLiteStore {
    public func fetch(_ request: FetchRequest) throws -> StoreFetchResult {
        try fetch(request, readingToMany: true)
    }

    /// `fetch(_:)`; objects hold their to-many values only with `readingToMany`.
    func fetch(_ request: FetchRequest, readingToMany: Bool) throws -> StoreFetchResult {
        let fetch = try CheckedFetch(request, model: model)
        let table = tables[fetch.entity.name]!
        let query = try makeQuery(for: fetch, table: table)
        return try readers.read { connection, txn in
            let statement = try connection.statement(query.sql)
            for (i, value) in query.bindings.enumerated() { try statement.bind(value, at: Int32(i + 1)) }
            defer { statement.reset() }
            switch fetch.resultType {
            case .count:
                _ = try statement.step()
                return StoreFetchResult(txn: txn, content: .count(Int(statement.int64(at: 0))))
            case .ids:
                var ids: [ObjectID] = []
                while try statement.step() {
                    ids.append(ObjectID(entity: fetch.entity.name, number: statement.int64(at: 0)))
                }
                return StoreFetchResult(txn: txn, content: .ids(ids))
            case .objects:
                var rows: [ObjectSnapshot] = []
                while try statement.step() { rows.append(table.row(from: statement, column: 0)) }
                statement.reset()
                guard readingToMany else { return StoreFetchResult(txn: txn, content: .objects(rows)) }
                let objects = try rows.map { (row) throws(SQLiteError) in try table.withToMany(row, on: connection) }
                return StoreFetchResult(txn: txn, content: .objects(objects))
            }
        }
    }

    /// The SQL of a checked fetch: the predicate compiled against alias `t` (its subqueries use `t_1`, …), sort keys through
    /// to-one relationships as `LEFT JOIN`s, ties broken by `Z_PK`, limit and offset bound.
    private func makeQuery(
        for fetch: CheckedFetch, table: SQLiteEntityTable
    ) throws -> (sql: String, bindings: [PropertyValue]) {
        let q = SQLSchema.quote
        var bindings: [PropertyValue] = []
        var condition = ""
        if let predicate = fetch.predicate {
            let compiled = try StorePredicates.sql(predicate, entity: fetch.entity.name, schema: schema, alias: "t")
            condition = " WHERE \(compiled.sql)"
            bindings = compiled.bindings
        }
        let from = " FROM \(q(schema.table(for: fetch.entity.name))) AS \"t\""
        let window = " LIMIT ? OFFSET ?"
        bindings += [.int(Int64(fetch.limit ?? -1)), .int(Int64(fetch.offset))]
        if fetch.resultType == .count {
            return ("SELECT COUNT(*) FROM (SELECT 1\(from)\(condition)\(window))", bindings)
        }
        var joins = ""
        var order: [String] = []
        for (i, key) in fetch.sortKeys.enumerated() {
            var alias = "\"t\""
            for (j, relationship) in key.relationships.enumerated() {
                let next = "\"s\(i)_\(j)\""
                joins +=
                    " LEFT JOIN \(q(schema.table(for: relationship.destination))) AS \(next)"
                    + " ON \(next).\"Z_PK\" = \(alias).\(q(relationship.name))"
                alias = next
            }
            order.append("\(alias).\(q(schema.column(for: key.attribute.name))) \(key.ascending ? "ASC" : "DESC")")
        }
        order.append("\"t\".\"Z_PK\" ASC")
        let columns = fetch.resultType == .ids ? "\"t\".\"Z_PK\"" : table.qualifiedColumnList(alias: "\"t\"")
        return (
            "SELECT \(columns)\(from)\(joins)\(condition) ORDER BY \(order.joined(separator: ", "))\(window)", bindings
        )
    }
}
