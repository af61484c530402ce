import ContextBusObjectGraph
import Foundation

extension SQLiteStore {
    /// Computes `request` in one SQL query on a read connection: `GROUP BY` the key columns and the bucket's window,
    /// the functions as SQL aggregates, the predicate compiled with bound parameters (as a fetch's), groups ordered
    /// ascending with `NULL` first, as `AggregateEvaluator` orders them.
    public func aggregate(_ request: AggregateRequest) throws -> AggregateResult {
        let checked = try CheckedAggregate(request, model: model)
        let query = try makeAggregateQuery(checked)
        return try readers.read { connection, txn in
            let statement = try connection.statement(query.sql)
            for (i, value) in query.bindings.enumerated() { try statement.bind(value, at: Int32(i + 1)) }
            defer { statement.reset() }
            var groups: [AggregateResult.Group] = []
            let keys = request.groupKeys
            while try statement.step() {
                var key: [String: PropertyValue] = [:]
                for (i, name) in keys.enumerated() {
                    key[name] = groupValue(name, at: Int32(i), of: checked, statement)
                }
                var values: [String: PropertyValue] = [:]
                for (i, value) in checked.values.enumerated() {
                    values[value.name] = functionValue(
                        value.function, at: Int32(keys.count + i), of: checked, statement)
                }
                groups.append(AggregateResult.Group(key: key, values: values))
            }
            return AggregateResult(txn: txn, groups: groups)
        }
    }

    private func makeAggregateQuery(_ aggregate: CheckedAggregate) throws -> (sql: String, bindings: [PropertyValue]) {
        let q = SQLSchema.quote
        func column(_ key: String) -> String {
            "\"t\".\(q(aggregate.entity.attribute(named: key) != nil ? schema.column(for: key) : key))"
        }
        var keys = aggregate.request.groupBy.map(column)
        if let bucket = aggregate.request.bucket {
            // The window's start: floor(x / s) * s, written without SQLite's optional math functions.
            let x = column(bucket.key)
            let s = bucket.seconds
            keys.append(
                "(CASE WHEN \(x) IS NULL THEN NULL WHEN \(x) >= 0 THEN CAST(\(x) / \(s) AS INTEGER)"
                    + " ELSE CAST(\(x) / \(s) AS INTEGER) - (CAST(\(x) / \(s) AS INTEGER) != \(x) / \(s)) END) * \(s)")
        }
        let functions = aggregate.values.map { value -> String in
            switch value.function {
            case .count: return "COUNT(*)"
            case .countOf(let key): return "COUNT(\(column(key)))"
            case .sum(let key): return "SUM(\(column(key)))"
            case .average(let key): return "AVG(\(column(key)))"
            case .minimum(let key): return "MIN(\(column(key)))"
            case .maximum(let key): return "MAX(\(column(key)))"
            }
        }
        var sql =
            "SELECT \((keys + functions).joined(separator: ", ")) FROM \(q(schema.table(for: aggregate.entity.name))) AS \"t\""
        var bindings: [PropertyValue] = []
        if let predicate = aggregate.predicate {
            let compiled = try StorePredicates.sql(predicate, entity: aggregate.entity.name, schema: schema, alias: "t")
            sql += " WHERE \(compiled.sql)"
            bindings = compiled.bindings
        }
        if !keys.isEmpty {
            let positions = (1...keys.count).map(String.init).joined(separator: ", ")
            sql += " GROUP BY \(positions) ORDER BY \(positions)"
        }
        return (sql, bindings)
    }

    private func groupValue(
        _ name: String, at column: Int32, of aggregate: CheckedAggregate, _ statement: SQLiteStatement
    ) -> PropertyValue {
        if aggregate.request.bucket?.key == name {
            return statement.isNull(at: column)
                ? .null : .date(Date(timeIntervalSince1970: statement.double(at: column)))
        }
        if let type = aggregate.type(of: name) { return statement.propertyValue(at: column, type: type) }
        let destination = aggregate.entity.relationship(named: name)!.destination
        return statement.reference(at: column, entity: destination)
    }

    private func functionValue(
        _ function: AggregateRequest.Function, at column: Int32, of aggregate: CheckedAggregate,
        _ statement: SQLiteStatement
    ) -> PropertyValue {
        switch function {
        case .count, .countOf: return .int(statement.int64(at: column))
        case .average: return statement.isNull(at: column) ? .null : .double(statement.double(at: column))
        case .sum(let key), .minimum(let key), .maximum(let key):
            return statement.propertyValue(at: column, type: aggregate.type(of: key)!)
        }
    }
}
