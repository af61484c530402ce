import ContextBusObjectGraph

extension StorePredicates {
    /// Compiles a prepared predicate to a SQL condition over the table aliased `alias`.
    static func sql(
        _ predicate: ObjectPredicate, entity: String, schema: SQLSchema, alias: String
    ) throws(StoreError) -> (sql: String, bindings: [PropertyValue]) {
        do {
            let fragment = try PredicateSQLCompiler.compile(predicate, entity: entity, schema: schema, alias: alias)
            return (fragment.sql, fragment.bindings)
        } catch {
            throw invalid(error)
        }
    }

    /// Registers the SQL functions compiled predicates call (`MATCHES`, `[cd]` folding) on a connection.
    static func registerFunctions(on db: OpaquePointer) throws {
        try PredicateSQLFunctions.register(on: db)
    }
}
