/// The one place where the stores call the predicate API (`ObjectPredicate.binding`, `validate`,
/// `evaluate`, `PredicateSQLCompiler`, `PredicateSQLFunctions`), mapping its errors to
/// `StoreError.invalidRequest(field: "where", …)`.
///
/// The stores only go through this type.
enum StorePredicates {
    /// Binds `arguments` into `predicate` and checks it against `entity`.
    static func prepare(
        _ predicate: ObjectPredicate, arguments: [String: PropertyValue], entity: String, model: Model
    ) throws(StoreError) -> ObjectPredicate {
        do {
            let bound = try predicate.binding(arguments)
            try bound.validate(for: entity, in: model)
            return bound
        } catch {
            throw invalid(error)
        }
    }

    /// An evaluator of a prepared predicate, to test many objects of `entity` in memory.
    static func evaluator(
        _ predicate: ObjectPredicate, entity: String, model: Model
    ) throws(StoreError) -> PredicateEvaluator {
        do {
            return try PredicateEvaluator(predicate, entity: entity, in: model)
        } catch {
            throw invalid(error)
        }
    }

    private static func invalid(_ error: ObjectPredicateError) -> StoreError {
        .invalidRequest(field: "where", message: error.description)
    }

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
